import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SERVICE_FEATURES } from '../src/shared/health.js';

/**
 * A local sink that only acknowledges (issue 16): each body is read and parsed as JSON (as any
 * server must), its events counted, and answered at once, in the shapes of both clients measured
 * against it: our queue route's `{status, accepted, duplicates}` and Mixpanel's `/import` answer
 * `{code, num_records_imported, status}`. Nothing is stored, so it measures the client alone.
 * `GET /healthz` answers as our service does, features included, so `cas import` does the same work
 * against the sink as against `cas serve`; a body that is not JSON is answered 400, never a crash.
 */
export interface Sink {
  url: string;
  events(): number;
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  let events = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.startsWith('/healthz')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'ok', version: 'sink', features: [...SERVICE_FEATURES] }));
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"status":400,"code":"invalid_json","message":"not JSON"}');
        return;
      }
      const n = Array.isArray(body) ? body.length : 1;
      events += n;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: req.url?.startsWith('/import') ? 'OK' : 'ok',
          code: 200,
          num_records_imported: n,
          accepted: n,
          duplicates: 0,
        }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events: () => events,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
