import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrorHandler } from './client-errors.js';

interface Tracked {
  /** When the socket's current wait began: its connection, its request, or its last answer. */
  since: number;
  /** The request being read or answered; undefined between requests (or before the first one). */
  request: IncomingMessage | undefined;
}

/**
 * Node checks the headers and request timeouts on a timer that `server.close()` stops, so once a
 * shutdown began, a client stalled in the middle of its headers or body held the service up for as
 * long as it kept the socket open (SIGTERM waited on it; found by probing). This keeps both limits
 * while closing: a socket still waiting for its headers past `headersTimeoutMs`, or for its body past
 * `requestTimeoutMs`, gets the same 408 and is closed. A request whose body arrived is never cut:
 * its handler finishes and its answer is sent, as a clean stop promises.
 */
export function keepTimeoutsWhileClosing(
  server: Server,
  limits: { headersTimeoutMs: number; requestTimeoutMs: number },
  intervalMs: number,
): { closing(): void } {
  const sockets = new Map<Socket, Tracked>();
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { since: Date.now(), request: undefined });
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const tracked = sockets.get(request.socket);
    if (!tracked) return;
    tracked.request = request;
    tracked.since = Date.now();
    response.once('finish', () => {
      tracked.request = undefined;
      tracked.since = Date.now();
    });
  });
  // A socket the live-events route upgraded is the websocket's now, with timeouts of its own.
  server.on('upgrade', (request: IncomingMessage) => sockets.delete(request.socket));

  const expired = (t: Tracked, now: number): boolean => {
    if (t.request === undefined) return now - t.since > limits.headersTimeoutMs;
    return !t.request.complete && now - t.since > limits.requestTimeoutMs;
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    closing() {
      if (timer !== undefined) return;
      timer = setInterval(() => {
        const now = Date.now();
        for (const [socket, t] of sockets) {
          if (!socket.destroyed && expired(t, now)) {
            const error: Error & { code?: string } = new Error('request timeout');
            error.code = 'ERR_HTTP_REQUEST_TIMEOUT';
            clientErrorHandler(error, socket);
          }
        }
      }, intervalMs);
      timer.unref();
      server.once('close', () => clearInterval(timer));
    },
  };
}
