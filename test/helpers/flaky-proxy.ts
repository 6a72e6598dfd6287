import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A misbehaving proxy in front of a real server: every `rateLimitEvery`-th request is answered 429
 * with `Retry-After`, every `dropEvery`-th has its connection destroyed, half of those before
 * forwarding (the server never saw it) and half after the upstream answered (the server stored the
 * batch but the client never hears so: the hard case for exactly-once).
 */
export interface FlakyProxy {
  url: string;
  counts: { requests: number; limited: number; droppedBefore: number; droppedAfter: number };
  close(): Promise<void>;
}

export async function startFlakyProxy(
  target: string,
  options: { rateLimitEvery: number; dropEvery: number; retryAfterSeconds?: number },
): Promise<FlakyProxy> {
  const counts = { requests: 0, limited: 0, droppedBefore: 0, droppedAfter: 0 };
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const n = ++counts.requests;
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    req.on('end', () => {
      if (n % options.rateLimitEvery === 0) {
        counts.limited++;
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': String(options.retryAfterSeconds ?? 1),
        });
        res.end(JSON.stringify({ status: 429, code: 'rate_limited', message: 'slow down' }));
        return;
      }
      const drop = n % options.dropEvery === 0;
      const dropBefore = drop && (n / options.dropEvery) % 2 === 1;
      if (dropBefore) {
        counts.droppedBefore++;
        req.socket.destroy();
        return;
      }
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () => {
            if (drop) {
              counts.droppedAfter++;
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(chunks));
          });
        },
      );
      forward.on('error', () => req.socket.destroy());
      forward.end(Buffer.concat(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
