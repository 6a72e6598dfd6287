import type { FastifyError, FastifyReply } from 'fastify';
import { ServiceError } from '../errors.js';

/**
 * Messages quote caller text (ids, cohort names, paths): one line and bounded, whatever was quoted,
 * so an error can neither forge extra log lines nor balloon.
 */
export function oneLineMessage(message: string): string {
  let escaped = '';
  for (const c of message) {
    const code = c.charCodeAt(0);
    escaped += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : c;
  }
  return escaped.length > 500 ? `${escaped.slice(0, 497)}...` : escaped;
}

/** Sends decisions §1's error body with the error's status and headers (Retry-After, Allow). */
export function sendError(reply: FastifyReply, error: ServiceError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const body = error.toBody();
  // An issue quotes caller text as much as the message does: `chartControls[][]…` nested 2,000
  // times made a 4 KB issue (found by probing).
  const issues = body.issues?.map((i) => ({
    ...i,
    path: oneLineMessage(i.path),
    message: oneLineMessage(i.message),
  }));
  return reply
    .status(error.status)
    .type('application/json')
    .send({ ...body, message: oneLineMessage(body.message), ...(issues ? { issues } : {}) });
}

/** Maps fastify's own failures (parsing, limits) onto decisions §1 statuses and codes. */
export function toServiceError(error: FastifyError): ServiceError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ServiceError(415, 'unsupported_media_type', 'request bodies must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ServiceError(413, 'payload_too_large', 'request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ServiceError(400, 'invalid_input', 'Content-Length does not match the body');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ServiceError(400, 'invalid_input', 'the request could not be read');
  }
  return undefined;
}
