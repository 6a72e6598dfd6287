import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../src/lib/index.js';
import type { LiveEvent, ServiceError } from '../src/lib/types.js';
import { startServiceOn, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * onEvent across a restart of the service (issue 17): the library's socket reconnects with a fresh
 * key, and the events committed while no socket was open are read from `live-events/events`, so the
 * app still sees every event of the session once, in commit order.
 */
const dir = tempDir('cas-library-reconnect-');
let svc: TestService | undefined;
afterAll(async () => {
  await svc?.stop();
  dir.cleanup();
});

const until = async (what: string, check: () => boolean, ms = 15_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('the library across a restart of the service', () => {
  it('delivers every event of the session once, in order, those committed while disconnected included', async () => {
    svc = await startServiceOn(dir.path);
    const port = Number(new URL(svc.url).port);
    const client = new Client({ endpoint: svc.url, apiKey: svc.apiKey, projectId: svc.projectId });
    const events: LiveEvent[] = [];
    const errors: ServiceError[] = [];
    const session = client.createSession({
      sessionId: 'rc-1',
      deviceId: 'dev-rc',
      onEvent: (e) => events.push(e),
      onError: (e) => errors.push(e),
    });
    session.trackEvent({ event: 'Before Restart', timestamp: '2026-01-05T10:00:00Z' });
    await session.flushAndContinue();
    await until('the first events', () => events.some((e) => e.event === 'Before Restart'));

    await svc.stop();
    svc = await startServiceOn(dir.path, { port });
    // Sent at once: committed, in all likelihood, before the socket is back (its backoff is 500 ms+).
    session.trackEvent({ event: 'After Restart', timestamp: '2026-01-05T10:00:01Z' });
    session.endSession({ timestamp: '2026-01-05T10:00:02Z' });
    await session.flush();
    await client.close();

    const query = new URLSearchParams({
      start: '2026-01-05T00:00:00Z',
      end: '2026-01-06T00:00:00Z',
      session_id: 'rc-1',
    });
    const res = await svc.get(`/bc/v1/live-events/events?${query}`);
    const stored = (res.json as Array<Record<string, unknown>>).reverse();
    expect(stored.map((r) => r.event)).toEqual([
      'Session Started',
      'Before Restart',
      'After Restart',
      'Session Ended',
    ]);
    expect(events.map((e) => e.event_id)).toEqual(stored.map((r) => r.event_id));
    expect(errors).toEqual([]);
  }, 60_000);
});

describe('the library when its socket never opens', () => {
  it('tells onError that stored events did not reach onEvent (they were lost to the app without a word)', async () => {
    const other = tempDir('cas-library-nosocket-');
    // One connection per address: the library's HTTP connection takes it, so every upgrade is 503.
    const t = await startServiceOn(other.path, { limits: { maxConnectionsPerAddress: 1 } });
    try {
      const client = new Client({ endpoint: t.url, apiKey: t.apiKey, projectId: t.projectId });
      const events: LiveEvent[] = [];
      const errors: ServiceError[] = [];
      const session = client.createSession({
        sessionId: 'ns-1',
        id: 'u-ns',
        onEvent: (e) => events.push(e),
        onError: (e) => errors.push(e),
      });
      session.trackEvent({ event: 'Stored', timestamp: '2026-01-05T10:00:00Z' });
      session.endSession({ timestamp: '2026-01-05T10:00:01Z' });
      await session.flush();
      await client.close();
      expect(events).toEqual([]);
      expect(errors.map((e) => e.message)).toEqual([
        expect.stringMatching(
          /^live events of session ns-1: \d+ of its own stored event\(s\), and those the service generated from them, did not reach onEvent before close/,
        ),
      ]);
      const stored = await t.get('/bc/v1/live-events/events?start=2026-01-05&end=2026-01-06&session_id=ns-1');
      expect((stored.json as unknown[]).length).toBeGreaterThan(0);
    } finally {
      await t.stop();
      other.cleanup();
    }
  }, 60_000);
});
