import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply } from 'fastify';
import type { ErrorBody } from '../../shared/errors.js';
import { afterOwedAnswers } from './pipelined.js';

/**
 * Failures fastify (or Node's HTTP parser) answers before any route runs: a request line or headers
 * over Node's 16 KiB limit, a malformed request, a path that is not valid percent-encoded UTF-8.
 * Their default bodies are `{error, message, statusCode}`; these give decisions §1's error body instead,
 * so a client sees one format whatever refused the request.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const overflow = error.code === 'HPE_HEADER_OVERFLOW';
  const body: ErrorBody = timeout
    ? { status: 408, code: 'invalid_input', message: 'the request was not received in time' }
    : overflow
      ? {
          status: 431,
          code: 'payload_too_large',
          message: 'the URL and headers exceed 16 KiB; send fewer or shorter query parameters',
        }
      : { status: 400, code: 'invalid_input', message: 'the request is not valid HTTP' };
  const text = JSON.stringify(body);
  // After the answers owed to requests before it on the connection, or a client reads it as theirs.
  afterOwedAnswers(socket, () => {
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${body.status} ${STATUS_CODES[body.status] ?? ''}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
          `Content-Type: application/json\r\nConnection: close\r\n\r\n${text}`,
      );
    }
    socket.destroy();
  });
}

/** Router failures (bad percent-encoding in the path, an over-long parameter): 400, our body. */
export function frameworkErrorHandler(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  const body: ErrorBody = {
    status: 400,
    code: 'invalid_input',
    message:
      error.code === 'FST_ERR_BAD_URL'
        ? 'the path is not valid percent-encoded UTF-8'
        : 'the request could not be routed',
  };
  void reply.status(400).type('application/json').send(body);
}
