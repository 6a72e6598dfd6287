import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';

/** Methods whose body fastify never reads, whatever their Content-Type says. */
const BODYLESS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * Refuses with 415, from the headers alone, a body that no parser of the route reads. fastify would
 * refuse it too, but only after the preParsing hook, which refuses a body over the limit (413) and
 * one the budget cannot hold (503) first: decisions §1 answers 415 before 413, whatever the size.
 * Like fastify, a Content-Type header or a body (Content-Length above 0, or chunked) needs a type.
 */
export function checkBodyType(request: FastifyRequest, otlp: boolean): void {
  if (BODYLESS.has(request.method)) return;
  const { 'content-type': type, 'content-length': length, 'transfer-encoding': chunked } = request.headers;
  const empty = chunked === undefined && (length === undefined || length === '0');
  if (type === undefined && empty) return;
  // fastify's lookup: its parsers are registered by media type, lower-cased, parameters ignored.
  const media = request.mediaType;
  if (media === 'application/json' || (otlp && media === 'application/x-protobuf')) return;
  throw new ServiceError(
    415,
    'unsupported_media_type',
    otlp
      ? 'request bodies must be application/json or application/x-protobuf'
      : 'request bodies must be application/json',
  );
}
