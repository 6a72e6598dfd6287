import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpError, NetworkError, ResponseValidationError, TimeoutError } from './errors.js';
import { type Client, type ClientOptions, createClient } from './http-client.js';
import type { RetryInfo } from './retry.js';

/** A real loopback server that misbehaves on cue: each request takes the next scripted handler. */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
interface Seen {
  method: string;
  url: string;
  at: number;
}

let server: Server;
let base: string;
let script: Handler[];
let seen: Seen[];
let client: Client | undefined;

beforeEach(async () => {
  script = [];
  seen = [];
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', at: Date.now() });
    // The last handler repeats, so "always 503" is a one-element script.
    const handler = script.length > 1 ? script.shift() : script[0];
    req.resume();
    req.on('end', () => (handler ?? json(200, { ok: true }))(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
}

function text(status: number, body: string, headers: Record<string, string> = {}): Handler {
  return (_req, res) => res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
}

const drop: Handler = (req) => req.socket.destroy();
const hang: Handler = () => {};

function connect(options: Partial<ClientOptions> = {}): Client {
  client = createClient({ endpoint: base, apiKey: 'k_test', projectId: 'p_test', ...options });
  return client;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected the request to fail'),
    (error: unknown) => error,
  );
}

describe('retries', () => {
  it('waits out Retry-After on 429 twice, then succeeds on the third attempt', async () => {
    script = [
      text(429, 'slow down', { 'retry-after': '1' }),
      text(429, 'slow down', { 'retry-after': '1' }),
      json(200, { ok: 1 }),
    ];
    const retries: RetryInfo[] = [];
    const started = Date.now();
    const result = await connect({ onRetry: (info) => retries.push(info) }).request({
      method: 'GET',
      path: '/x',
    });
    const elapsed = Date.now() - started;
    expect(result).toEqual({ ok: 1 });
    expect(seen).toHaveLength(3);
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(2600);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    for (const r of retries) {
      expect(r.delayMs).toBeGreaterThanOrEqual(1000);
      expect(r.delayMs).toBeLessThanOrEqual(1100);
      expect(r.reason).toContain('HTTP 429');
    }
    // The server-side gap between attempts is the honoured wait, not just the client's claim.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('lets many requests wait to try again at once without a MaxListenersExceededWarning', async () => {
    // The first 12 requests are answered 503 with Retry-After: 1, the retries 200.
    script = [...Array(12).fill(text(503, 'busy', { 'retry-after': '1' })), json(200, { ok: 3 })];
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const c = connect();
      const answers = await Promise.all(
        [...Array(12).keys()].map(() => c.request({ method: 'GET', path: '/x' })),
      );
      expect(answers).toEqual(Array(12).fill({ ok: 3 }));
      expect(seen).toHaveLength(24);
      // Node emits its warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('retries a 503 and returns the later success', async () => {
    script = [text(503, 'shutting down'), json(200, { ok: 2 })];
    await expect(connect().request({ method: 'POST', path: '/q', body: [1] })).resolves.toEqual({ ok: 2 });
    expect(seen).toHaveLength(2);
  });

  it('gives up on a server that is always 503 after the configured attempts', async () => {
    script = [json(503, { status: 503, code: 'unavailable', message: 'shutting down' })];
    const error = await failure(
      connect({ retries: 3, retryTimeMs: 5_000 }).request({ method: 'GET', path: '/x' }),
    );
    expect(error).toBeInstanceOf(HttpError);
    const http = error as HttpError;
    expect(http.status).toBe(503);
    expect(http.code).toBe('unavailable');
    expect(http.attempts).toBe(3);
    expect(http.kind).toBe('http');
    expect(http.toRecord()).toEqual({ errored: true, status: 503, message: 'shutting down' });
    expect(seen).toHaveLength(3);
  });

  it('makes at most the attempts a request asks for, for a caller that retries itself (the live socket)', async () => {
    script = [json(503, { status: 503, code: 'unavailable', message: 'shutting down' })];
    const error = await failure(
      connect({ retries: 3, retryTimeMs: 5_000 }).request({ method: 'GET', path: '/x', attempts: 1 }),
    );
    expect((error as HttpError).attempts).toBe(1);
    expect(seen).toHaveLength(1);
  });

  it('does not retry what its `final` calls final, and retries the rest as before', async () => {
    const full = {
      status: 503,
      code: 'unavailable',
      message: 'the service cannot use its storage: the disk is full',
    };
    const final = (error: unknown) => error instanceof HttpError && error.message.includes('storage');
    script = [json(503, full)];
    const error = await failure(
      connect({ retries: 3, retryTimeMs: 5_000, final }).request({ method: 'GET', path: '/x' }),
    );
    expect((error as HttpError).attempts).toBe(1);
    expect(seen).toHaveLength(1);
    await client?.close();
    script = [json(503, { ...full, message: 'shutting down' }), json(200, { ok: 3 })];
    await expect(connect({ retries: 3, final }).request({ method: 'GET', path: '/x' })).resolves.toEqual({
      ok: 3,
    });
    expect(seen).toHaveLength(3);
  });

  it('stops when the next backoff would overrun the time budget', async () => {
    script = [text(500, 'boom')];
    // random() = 1 makes every backoff its ceiling: 250 ms, which a 100 ms budget cannot hold.
    const error = await failure(
      connect({ retries: 5, retryTimeMs: 100, random: () => 0.999 }).request({ method: 'GET', path: '/x' }),
    );
    expect((error as HttpError).status).toBe(500);
    expect(seen).toHaveLength(1);
  });

  it('retries a dropped connection and succeeds', async () => {
    script = [drop, json(200, { ok: 3 })];
    const reasons: string[] = [];
    const result = await connect({ onRetry: (i) => reasons.push(i.error.kind) }).request({
      method: 'POST',
      path: '/q',
      body: { a: 1 },
    });
    expect(result).toEqual({ ok: 3 });
    expect(seen).toHaveLength(2);
    expect(reasons).toEqual(['network']);
  });

  it('reports an unreachable server as a NetworkError with status -1', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    client = createClient({ endpoint: `http://127.0.0.1:${port}`, apiKey: 'k', projectId: 'p', retries: 2 });
    const error = await failure(client.request({ method: 'GET', path: '/x' }));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('ECONNREFUSED');
    expect((error as NetworkError).attempts).toBe(2);
    expect((error as NetworkError).toRecord()).toMatchObject({ errored: true, status: -1 });
  });

  it('times out a response slower than timeoutMs, on every attempt', async () => {
    script = [hang];
    const started = Date.now();
    const error = await failure(
      connect({ timeoutMs: 200, retries: 2 }).request({ method: 'GET', path: '/x' }),
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).attempts).toBe(2);
    expect((error as TimeoutError).toRecord().status).toBe(-1);
    expect(seen).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('fails at once, saying when to try again, when Retry-After exceeds the budget', async () => {
    script = [text(429, 'rate limited', { 'retry-after': '120' })];
    const started = Date.now();
    const error = await failure(connect({ retryTimeMs: 5_000 }).request({ method: 'GET', path: '/x' }));
    expect(Date.now() - started).toBeLessThan(500);
    expect(seen).toHaveLength(1);
    const http = error as HttpError;
    expect(http.status).toBe(429);
    expect(http.retryAfterSeconds).toBe(120);
    expect(http.message).toBe('rate limited (try again in 120 s)');
  });

  it('does not retry a non-idempotent request after a 503, but does after a 429', async () => {
    script = [text(503, 'busy')];
    await failure(connect().request({ method: 'POST', path: '/q', body: [], idempotent: false }));
    expect(seen).toHaveLength(1);
    script = [text(429, 'later', { 'retry-after': '0' }), json(200, { ok: 4 })];
    await expect(
      client!.request({ method: 'POST', path: '/q', body: [], idempotent: false }),
    ).resolves.toEqual({
      ok: 4,
    });
    expect(seen).toHaveLength(3);
  });

  it('lets an abort signal cut a backoff short without further attempts', async () => {
    script = [text(503, 'busy', { 'retry-after': '5' })];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('interrupted')), 100);
    const error = await failure(connect().request({ method: 'GET', path: '/x', signal: controller.signal }));
    expect((error as Error).message).toBe('interrupted');
    expect(seen).toHaveLength(1);
  });

  it("ends a request waiting to try again when its client closes, with the last attempt's error", async () => {
    script = [text(503, 'busy', { 'retry-after': '5' })];
    const c = connect();
    const started = Date.now();
    const pending = failure(c.request({ method: 'GET', path: '/x' }));
    await until(() => seen.length === 1);
    await c.close();
    const error = await pending;
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(seen).toHaveLength(1);
  });
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('error bodies', () => {
  it('turns a plain-text 400 into an HttpError with that message and does not retry', async () => {
    script = [text(400, 'ranges must be a JSON array\n')];
    const error = await failure(connect().request({ method: 'GET', path: '/x' }));
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).toRecord()).toEqual({
      errored: true,
      status: 400,
      message: 'ranges must be a JSON array',
    });
    expect(seen).toHaveLength(1);
  });

  it('keeps code and issues of our own error body', async () => {
    const issues = [{ path: '[0].timestamp', message: 'must be an ISO 8601 time with Z or an offset' }];
    script = [json(400, { status: 400, code: 'invalid_input', message: 'bad event', issues })];
    const error = (await failure(connect().request({ method: 'POST', path: '/q', body: [] }))) as HttpError;
    expect(error.code).toBe('invalid_input');
    expect(error.issues).toEqual(issues);
    expect(error.message).toBe('bad event');
  });

  // "HTTP 301 Moved Permanently" was all it said: behind an http → https move nobody knew where to.
  it('says where a redirect points, and does not follow it (the key would travel there)', async () => {
    script = [text(301, '', { location: 'https://cas.example/bc/v1/x' })];
    const c = connect();
    const error = (await failure(c.request({ method: 'GET', path: '/x' }))) as HttpError;
    expect(error.status).toBe(301);
    expect(error.message).toBe(
      'the service redirects to https://cas.example/bc/v1/x, which is not followed: use https://cas.example/bc/v1 as the endpoint (HTTP 301 Moved Permanently)',
    );
    expect(seen).toHaveLength(1);
    script = [text(307, '', { location: '/elsewhere' })];
    const relative = (await failure(c.request({ method: 'GET', path: '/x' }))) as HttpError;
    expect(relative.message).toContain(
      `redirects to ${base}/elsewhere, which is not followed: use ${base} as`,
    );
    // The endpoint, not the URL of this one request: given whole, it asked for the path twice (found by probing).
    script = [text(308, '', { location: 'https://new.example/prefix/bc/v1/user/identify?x=1' })];
    const moved = (await failure(
      c.request({ method: 'POST', path: '/bc/v1/user/identify', body: {} }),
    )) as HttpError;
    expect(moved.message).toContain('use https://new.example/prefix as the endpoint');
  });

  it('cuts a huge error body to one short line', async () => {
    script = [text(404, `${'no such route '.repeat(100_000)}`)];
    const error = (await failure(connect().request({ method: 'GET', path: '/x' }))) as HttpError;
    expect(error.status).toBe(404);
    expect(error.message.length).toBeLessThanOrEqual(300);
    expect(error.message).not.toContain('\n');
  });
});

describe('responses', () => {
  it('raises ResponseValidationError for a body that fails the schema', async () => {
    script = [json(200, { status: 7 })];
    const schema = z.object({ status: z.string() });
    const error = await failure(connect().request({ method: 'GET', path: '/healthz', schema }));
    expect(error).toBeInstanceOf(ResponseValidationError);
    const invalid = error as ResponseValidationError;
    expect(invalid.kind).toBe('validation');
    expect(invalid.issues[0]?.path).toBe('status');
    expect(invalid.message).toContain('GET /healthz');
    expect(seen).toHaveLength(1);
  });

  it('says an empty 2xx body is empty, where a schema wants one', async () => {
    script = [text(200, '')];
    const schema = z.object({ status: z.string() });
    const error = await failure(connect().request({ method: 'GET', path: '/healthz', schema }));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).message).toBe('GET /healthz answered 200 with an empty body');
  });

  it('raises ResponseValidationError for a 2xx body that is not JSON', async () => {
    script = [text(200, '<html>login</html>')];
    const error = await failure(connect().request({ method: 'GET', path: '/x' }));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).status).toBe(200);
  });

  it("sends to the endpoint's own path, with the query, and returns the parsed body", async () => {
    script = [json(200, { ok: 1 })];
    const client = connect({ endpoint: `${base}/gateway/` });
    const body = await client.request({ method: 'GET', path: '/bc/v1/x', query: { a: 'b c', n: 2 } });
    expect(body).toEqual({ ok: 1 });
    expect(seen).toEqual([expect.objectContaining({ method: 'GET', url: '/gateway/bc/v1/x?a=b%20c&n=2' })]);
  });

  it('takes an endpoint given with the API prefix (`…/bc/v1/`) as its base, not doubling the prefix', async () => {
    script = [json(200, { ok: 1 }), json(200, { ok: 2 })];
    await connect({ endpoint: `${base}/bc/v1/` }).request({ method: 'GET', path: '/bc/v1/x' });
    await connect({ endpoint: `${base}/gateway/bc/v1` }).request({ method: 'GET', path: '/bc/v1/y' });
    expect(seen.map((r) => r.url)).toEqual(['/bc/v1/x', '/gateway/bc/v1/y']);
  });

  it('opens at most 64 connections to an origin, the other requests waiting for one', async () => {
    let open = 0;
    let most = 0;
    server.on('connection', (socket) => {
      most = Math.max(most, ++open);
      socket.on('close', () => open--);
    });
    // Each answer takes 50 ms, so requests sent together overlap.
    script = [(req, res) => setTimeout(() => json(200, { ok: true })(req, res), 50)];
    const c = connect();
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => c.request({ method: 'POST', path: '/bc/v1/events/queue', body: [] })),
    );
    expect(answers).toHaveLength(200);
    expect(seen).toHaveLength(200);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(64);
  });

  it('returns undefined for an empty 2xx body when no schema is given', async () => {
    script = [(_req, res) => res.writeHead(204).end()];
    await expect(connect().request({ method: 'POST', path: '/x', body: {} })).resolves.toBeUndefined();
  });
});
