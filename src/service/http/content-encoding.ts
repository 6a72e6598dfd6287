import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ServiceError } from '../errors.js';

/** What fastify compares with Content-Length when preParsing hands it a decoded stream. */
type Decoded = PassThrough & { receivedEncodedLength: number };

/**
 * A `Content-Encoding: gzip` body, decoded before the body parser reads it. Every route takes it:
 * the OTLP Collector's otlphttp exporter compresses by default, and a client sending a large batch
 * over a slow link may too, while one that compresses against a service that ignores the header
 * would only see its JSON refused as "not valid UTF-8". fastify counts the decoded bytes against the
 * body limit (413), so a small bomb cannot inflate past it; the encoded bytes are what Content-Length
 * is checked against. Other encodings were refused with 415 from the headers (`body-type.ts`).
 */
export function gunzipBody(payload: Readable): Readable {
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
