import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';

/** What fastify compares with Content-Length when preParsing hands it a decoded stream. */
type Decoded = PassThrough & { receivedEncodedLength: number };

/**
 * The body of a route that accepts `Content-Encoding: gzip` (the OTLP receiver: the Collector's
 * otlphttp exporter compresses by default), decoded before the body parser reads it. fastify counts
 * the decoded bytes against the body limit (413), so a small bomb cannot inflate past it; the
 * encoded bytes are what Content-Length is checked against. Other encodings are 415.
 */
export function decodeContentEncoding(request: FastifyRequest, payload: Readable): Readable {
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding === 'identity' || encoding === '') return payload;
  if (encoding !== 'gzip') {
    throw new ServiceError(
      415,
      'unsupported_media_type',
      `Content-Encoding "${encoding}" is not supported; send gzip or none`,
    );
  }
  const out = new PassThrough() as Decoded;
  out.receivedEncodedLength = 0;
  const gunzip = createGunzip();
  payload.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  payload.on('error', (error) => out.destroy(error));
  gunzip.on('error', () =>
    out.destroy(new ServiceError(400, 'invalid_input', 'request body is not valid gzip')),
  );
  payload.pipe(gunzip).pipe(out);
  return out;
}
