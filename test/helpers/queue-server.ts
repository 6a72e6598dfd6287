import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseQueueBody } from '../../src/shared/events.js';

/**
 * A small real HTTP server that speaks `POST /bc/v1/events/queue` as decisions §4 describes it:
 * the whole body validated with the shared schema (400 with `[i].path` issues), all or nothing,
 * each event_id stored once (`{status, accepted, duplicates}`). It stands in for the service's
 * ingestion in importer tests, and can refuse chosen events (409) to exercise isolation.
 */
export interface QueueServer {
  url: string;
  /** Stored events by event_id, in arrival order. */
  stored: Map<string, Record<string, unknown>>;
  /** Every request's event ids, in order (a repeat shows up twice). */
  batches: string[][];
  /** The most queue requests it held at once. */
  maxInFlight: () => number;
  /** Queue requests left unanswered (`holdFrom`). */
  held: () => number;
  /** Answers the requests that come from now on (those held stay unanswered). */
  release(): void;
  /** Stops failing (see `failFrom`). */
  heal(): void;
  close(): Promise<void>;
}

export interface QueueServerOptions {
  /** A reason to refuse an event with 409 (the whole request then stores nothing). */
  refuse?: (event: Record<string, unknown>) => string | undefined;
  /** Milliseconds to wait before answering each request. */
  delayMs?: number;
  /** What `/healthz` lists as `features` (default: none, as the hosted service). */
  features?: readonly string[];
  /** From this queue request on (1-based), never answer nor store: a service that hangs. */
  holdFrom?: number;
  /** A status `/healthz` answers instead of 200 (with a text body). */
  healthStatus?: number;
  /** From this queue request on (1-based), answer 503 and store nothing, until `heal()`. */
  failFrom?: number;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startQueueServer(options: QueueServerOptions = {}): Promise<QueueServer> {
  const stored = new Map<string, Record<string, unknown>>();
  const batches: string[][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let requests = 0;
  let held = 0;
  let holding = options.holdFrom !== undefined;
  let failing = options.failFrom !== undefined;
  const server = createServer(async (req, res) => {
    if (req.url === '/healthz' && options.healthStatus !== undefined) {
      res.writeHead(options.healthStatus, { 'content-type': 'text/plain' }).end('health check failing');
      return;
    }
    if (req.url === '/healthz')
      return send(res, 200, { status: 'ok', ...(options.features ? { features: options.features } : {}) });
    // Our importer adds `?history=true` for a service that lists our features.
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/bc/v1/events/queue')
      return send(res, 404, { status: 404, code: 'not_found', message: 'no such route' });
    if (!req.headers.authorization || !req.headers['x-app-id'])
      return send(res, 401, { status: 401, code: 'unauthorized', message: 'no credentials' });
    const text = await readBody(req);
    requests++;
    if (holding && requests >= (options.holdFrom ?? 0)) {
      held++;
      return;
    }
    if (failing && requests >= (options.failFrom ?? 0))
      return send(res, 503, { status: 503, code: 'unavailable', message: 'down for maintenance' });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    inFlight--;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return send(res, 400, { status: 400, code: 'invalid_input', message: 'body is not JSON' });
    }
    const items = (Array.isArray(raw) ? raw : [raw]) as Array<Record<string, unknown>>;
    batches.push(items.map((e) => String(e.event_id)));
    const parsed = parseQueueBody(raw);
    if (!parsed.ok)
      return send(res, 400, {
        status: 400,
        code: 'invalid_input',
        message: 'invalid events',
        issues: parsed.issues,
      });
    const conflicts = items.flatMap((e, i) => {
      const reason = stored.has(String(e.event_id)) ? undefined : options.refuse?.(e);
      return reason === undefined ? [] : [{ path: `[${i}].session_id`, message: reason }];
    });
    if (conflicts.length > 0)
      return send(res, 409, { status: 409, code: 'conflict', message: 'refused', issues: conflicts });
    let accepted = 0;
    let duplicates = 0;
    for (const e of items) {
      const id = String(e.event_id);
      if (stored.has(id)) duplicates++;
      else {
        stored.set(id, e);
        accepted++;
      }
    }
    send(res, 200, { status: 'ok', accepted, duplicates });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stored,
    batches,
    maxInFlight: () => maxInFlight,
    held: () => held,
    release: () => {
      holding = false;
    },
    heal: () => {
      failing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
