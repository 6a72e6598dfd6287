import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorBody } from '../../shared/errors.js';

export interface ConnectionCaps {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/** Seconds a refused client is told to wait: connections free up as requests finish or time out. */
const RETRY_AFTER_S = 1;

function refuse(socket: Socket, message: string): void {
  const body: ErrorBody = { status: 503, code: 'unavailable', message };
  const text = JSON.stringify(body);
  // Written before any request is read: a client that sent one gets the answer; the socket is then
  // destroyed at once, since waiting for it to close politely is what would hold the descriptor.
  socket.write(
    `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `Retry-After: ${RETRY_AFTER_S}\r\nConnection: close\r\n\r\n${text}`,
  );
  socket.destroy();
}

/**
 * Caps open connections in all and per remote address, so clients that open sockets and never
 * finish a request (or finish none quickly) cannot take every file descriptor: one address can fill
 * only its own share. A connection over a cap is answered 503 and closed before anything is read.
 * Runs before Node's HTTP parser sees the socket (prepended 'connection' listener).
 */
export function guardConnections(server: Server, caps: ConnectionCaps): { open(): number } {
  const perAddress = new Map<string, number>();
  let total = 0;
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const mine = perAddress.get(address) ?? 0;
    if (total >= caps.maxConnections) {
      refuse(socket, `the service has ${caps.maxConnections} open connections, its limit; retry shortly`);
      return;
    }
    if (mine >= caps.maxConnectionsPerAddress) {
      refuse(
        socket,
        `${caps.maxConnectionsPerAddress} connections from this address are open, the limit; close idle ones or retry shortly`,
      );
      return;
    }
    total += 1;
    perAddress.set(address, mine + 1);
    socket.once('close', () => {
      total -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
  });
  return { open: () => total };
}
