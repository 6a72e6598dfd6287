import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { LiveFrame } from '../shared/live-events.js';
import { createClient } from './http-client.js';
import { liveSocketUrl, openLiveSocket } from './live-socket.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A real local server misbehaving on purpose: `realtime` answers as given, upgrades as `upgrade` says. */
async function fakeService(
  realtime: (n: number) => { status: number; body: unknown },
  upgrade: (n: number) => 'refuse' | 'drop' | 'end-session' | 'silent',
  /** Upgrades only at `/`, 404 elsewhere, as the hosted service (decisions §7). */
  rootOnly = false,
): Promise<string> {
  const wss = new WebSocketServer({ noServer: true });
  let keys = 0;
  let upgrades = 0;
  const server = createServer((req, res) => {
    const { status, body } = realtime(++keys);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    expect(req.url).toMatch(/^\/bc\/v1\/live-events\/realtime/);
  });
  server.on('upgrade', (req, socket, head) => {
    if (rootOnly && req.url !== '/') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const what = upgrade(++upgrades);
    expect(req.headers.authorization).toBe(`Bearer key-${keys}`);
    if (what === 'refuse') {
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      // Open, then nothing at all, not even pings: a connection cut without a close.
      if (what === 'silent') return;
      const frame: LiveFrame = {
        organization_id: 'o',
        app_id: 'p',
        session_id: 's',
        user_id: 'u',
        event_id: `e${upgrades}`,
        timestamp: new Date(0).toISOString(),
        event: what === 'end-session' ? 'Session Ended' : 'Session Started',
      };
      ws.send(JSON.stringify(frame));
      ws.send('not json');
      if (what === 'end-session') ws.close(1000, 'session ended');
      else ws.terminate();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const client = (endpoint: string) => createClient({ endpoint, apiKey: 'k', projectId: 'p', retries: 1 });

describe('live socket client', () => {
  it('derives the socket address from the endpoint', () => {
    expect(liveSocketUrl('http://127.0.0.1:8787')).toBe('ws://127.0.0.1:8787/bc/v1/live-events/ws');
    expect(liveSocketUrl('https://x.example/base/')).toBe('wss://x.example/base/bc/v1/live-events/ws');
  });

  it("opens the socket at the base URL where the service refuses ours with 404 (the hosted one's)", async () => {
    expect(liveSocketUrl('https://x.example/base/', true)).toBe('wss://x.example/base/');
    const endpoint = await fakeService(
      (n) => ({ status: 200, body: { authorization_key: `key-${n}` } }),
      () => 'end-session',
      true,
    );
    const frames: string[] = [];
    const socket = openLiveSocket({
      client: client(endpoint),
      sessionId: 's',
      onFrame: (f) => frames.push(f.event),
      firstOpenAttempts: 1,
      backoff: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    expect(await socket.done).toEqual({ reason: 'session-ended' });
    expect(frames).toEqual(['Session Ended']);
  });

  it('reconnects with a fresh key after refusals and drops, then ends with the session', async () => {
    const plan = ['refuse', 'drop', 'refuse', 'end-session'] as const;
    const endpoint = await fakeService(
      (n) => ({ status: 200, body: { authorization_key: `key-${n}` } }),
      (n) => plan[n - 1] ?? 'refuse',
    );
    const frames: string[] = [];
    const retries: number[] = [];
    let opens = 0;
    const socket = openLiveSocket({
      client: client(endpoint),
      sessionId: 's',
      onFrame: (f) => frames.push(f.event_id),
      onOpen: () => opens++,
      onRetry: ({ attempt }) => retries.push(attempt),
      backoff: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    expect(await socket.done).toEqual({ reason: 'session-ended' });
    expect(frames).toEqual(['e2', 'e4']);
    expect(opens).toBe(2);
    // The count restarts after a socket that opened: 1 (refused), 1 (dropped after opening), 2 (refused).
    expect(retries).toEqual([1, 1, 2]);
  });

  it('opens again a socket that hears nothing from the service, not even its pings', async () => {
    const plan = ['silent', 'end-session'] as const;
    const endpoint = await fakeService(
      (n) => ({ status: 200, body: { authorization_key: `key-${n}` } }),
      (n) => plan[n - 1] ?? 'refuse',
    );
    const reasons: string[] = [];
    const socket = openLiveSocket({
      client: client(endpoint),
      sessionId: 's',
      onFrame: () => undefined,
      onRetry: ({ error }) => reasons.push(error.message),
      silenceMs: 300,
      backoff: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    expect(await socket.done).toEqual({ reason: 'session-ended' });
    expect(reasons).toEqual(['the service sent nothing for 0.3 s']);
  });

  it('gives up at once on a service without live events, and on a refused key', async () => {
    const none = await fakeService(
      () => ({ status: 404, body: { status: 404, code: 'not_found', message: 'no route' } }),
      () => 'refuse',
    );
    const noRoute = await openLiveSocket({ client: client(none), onFrame: () => undefined }).done;
    expect(noRoute).toMatchObject({ reason: 'failed', error: { kind: 'unsupported', status: 404 } });
    const denied = await fakeService(
      () => ({ status: 403, body: { status: 403, code: 'forbidden', message: 'no' } }),
      () => 'refuse',
    );
    const forbidden = await openLiveSocket({ client: client(denied), onFrame: () => undefined }).done;
    expect(forbidden).toMatchObject({ reason: 'failed', error: { kind: 'refused', status: 403 } });
  });
});
