import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrorHandler } from './client-errors.js';

interface Tracked {
  /** When the socket's current wait began: its connection, its request, or its last answer. */
  since: number;
  /** The request being read or answered; undefined between requests (or before the first one). */
  request: IncomingMessage | undefined;
  /** Its answer, until every byte of it has left for the kernel ('finish'). */
  response: ServerResponse | undefined;
}

/**
 * Node checks the headers and request timeouts on a timer that `server.close()` stops, so once a
 * shutdown began, a client stalled in the middle of its headers or body held the service up for as
 * long as it kept the socket open (SIGTERM waited on it; found by probing). This keeps both limits
 * while closing: a socket still waiting for its headers past `headersTimeoutMs`, or for its body past
 * `requestTimeoutMs`, gets the same 408 and is closed. A request whose body arrived is never cut:
 * its handler finishes and its answer is sent, as a clean stop promises.
 *
 * "Sent" includes the answer's bytes still queued in the process: Node's `server.close()` destroys
 * every connection whose answer has ended, written out or not, so a client reading a large answer
 * slowly got its first megabytes and then EOF (found by probing: 4.3 of 5.4 MB). Here such a
 * connection is ended once its answer is written out instead; a client that reads nothing for
 * `requestTimeoutMs` after the stop began is cut then, so it cannot hold the stop up either.
 */
export function keepTimeoutsWhileClosing(
  server: Server,
  limits: { headersTimeoutMs: number; requestTimeoutMs: number },
  intervalMs: number,
): { closing(): void } {
  const sockets = new Map<Socket, Tracked>();
  let closingSince: number | undefined;
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { since: Date.now(), request: undefined, response: undefined });
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const tracked = sockets.get(request.socket);
    if (!tracked) return;
    tracked.request = request;
    tracked.response = response;
    tracked.since = Date.now();
    response.once('finish', () => {
      tracked.request = undefined;
      tracked.response = undefined;
      tracked.since = Date.now();
      // Written out during the stop: nothing more will be read on this connection.
      if (closingSince !== undefined) request.socket.end();
    });
  });
  // A socket the live-events route upgraded is the websocket's now, with timeouts of its own.
  server.on('upgrade', (request: IncomingMessage) => sockets.delete(request.socket));

  // What Node's close() calls: the same, less the connections still writing an answer out.
  server.closeIdleConnections = () => {
    for (const [socket, t] of sockets) {
      if (t.request === undefined && t.response === undefined) socket.destroy();
    }
  };

  const expired = (t: Tracked, now: number): boolean => {
    if (t.request === undefined) return now - t.since > limits.headersTimeoutMs;
    return !t.request.complete && now - t.since > limits.requestTimeoutMs;
  };
  const unread = (t: Tracked, now: number): boolean =>
    t.response?.writableEnded === true && now - (closingSince ?? now) > limits.requestTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  return {
    closing() {
      if (timer !== undefined) return;
      closingSince = Date.now();
      timer = setInterval(() => {
        const now = Date.now();
        for (const [socket, t] of sockets) {
          if (socket.destroyed) continue;
          if (unread(t, now)) socket.destroy();
          else if (expired(t, now)) {
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
