import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';

/** Methods whose body fastify never reads, whatever their headers say. */
const BODYLESS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** The Content-Encodings a body may have: every route decodes gzip (`content-encoding.ts`). */
export type BodyEncoding = 'identity' | 'gzip';

/**
 * Refuses with 415, from the headers alone, a body that no parser of the route reads, or in an
 * encoding the service does not decode; otherwise says how the body is encoded. fastify would refuse
 * an unknown type too, but only after the preParsing hook, which refuses a body over the limit (413)
 * and one the budget cannot hold (503) first: decisions §1 answers 415 before 413, whatever the
 * size. Like fastify, a Content-Type header or a body (Content-Length above 0, or chunked) needs a
 * type.
 */
export function checkBodyType(request: FastifyRequest, otlp: boolean): BodyEncoding {
  if (BODYLESS.has(request.method)) return 'identity';
  const { 'content-type': type, 'content-length': length, 'transfer-encoding': chunked } = request.headers;
  const empty = chunked === undefined && (length === undefined || length === '0');
  if (type === undefined && empty) return 'identity';
  // fastify's lookup: its parsers are registered by media type, lower-cased, parameters ignored.
  const media = request.mediaType;
  if (media !== 'application/json' && !(otlp && media === 'application/x-protobuf')) {
    throw new ServiceError(
      415,
      'unsupported_media_type',
      otlp
        ? 'request bodies must be application/json or application/x-protobuf'
        : 'request bodies must be application/json',
    );
  }
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding === 'identity' || encoding === '') return 'identity';
  if (encoding === 'gzip') return 'gzip';
  throw new ServiceError(
    415,
    'unsupported_media_type',
    `Content-Encoding "${encoding}" is not supported; send gzip or none`,
  );
}
