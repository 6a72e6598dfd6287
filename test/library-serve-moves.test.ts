import { afterAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../src/lib/index.js';
import type { ServiceError } from '../src/lib/types.js';
import { startServe, stopChild } from './helpers/cli.js';
import { queryDataDir } from './helpers/fingerprint.js';
import { tempDir } from './helpers/temp.js';

/**
 * A Client without an endpoint uses the `cas serve` holding its data directory (server.json). When
 * that server stops and another starts on another port, the client finds the new one: it kept the
 * first address for good, and every later event failed with "cannot reach" (found by probing).
 */
const dir = tempDir('cas-library-moves-');
const servers: Array<Awaited<ReturnType<typeof startServe>>> = [];
afterAll(async () => {
  for (const s of servers) await stopChild(s.child, 'SIGKILL');
  dir.cleanup();
});

describe('a Client over a data directory whose cas serve moves', () => {
  it('sends to the server that holds the directory now', async () => {
    const first = await startServe(['--data-dir', dir.path]);
    servers.push(first);
    // One attempt a request: what the retries would have done slowly, the test sees at once.
    const client = new Client({ dataDir: dir.path, retries: 1 });
    const errors: ServiceError[] = [];
    const send = async (id: string) => {
      const session = client.createSession({
        sessionId: id,
        id: 'mover',
        onError: (e) => errors.push(e),
      });
      session.trackEvent({ event: 'Moved', timestamp: '2026-01-05T10:00:00Z' });
      await session.flush();
    };
    try {
      await send('before');
      expect(await stopChild(first.child, 'SIGTERM')).toBe(0);
      const second = await startServe(['--data-dir', dir.path]);
      servers.push(second);
      expect(second.info.url).not.toBe(first.info.url);
      await send('after');
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
    await stopChild(servers[1]!.child, 'SIGTERM');
    const rows = await queryDataDir(
      dir.path,
      "SELECT session_id FROM events WHERE event = 'Moved' ORDER BY session_id",
    );
    const sessions = rows.map((r) => r.session_id);
    expect(sessions).toEqual(['after', 'before']);
  }, 60_000);

  it("finds it for the user routes and the session's live events too", async () => {
    const data = tempDir('cas-library-moves-live-');
    const first = await startServe(['--data-dir', data.path]);
    servers.push(first);
    const client = new Client({ dataDir: data.path, retries: 1 });
    const errors: ServiceError[] = [];
    const seen: string[] = [];
    try {
      expect((await client.userIdentify({ id: 'u-before' })).id).toBe('u-before');
      const session = client.createSession({
        sessionId: 'live-move',
        id: 'u-before',
        onError: (e) => errors.push(e),
        onEvent: (e) => seen.push(e.event),
      });
      session.trackEvent({ event: 'Before' });
      await session.flushAndContinue();
      expect(await stopChild(first.child, 'SIGTERM')).toBe(0);
      const second = await startServe(['--data-dir', data.path]);
      servers.push(second);
      expect(second.info.url).not.toBe(first.info.url);
      // It asked the old port until close, for identify as for the socket.
      expect((await client.userIdentify({ id: 'u-after' })).id).toBe('u-after');
      session.trackEvent({ event: 'After' });
      await session.flushAndContinue();
      // The socket follows the connection the calls above found, at its next attempt (backoff).
      await vi.waitFor(() => expect(seen).toContain('After'), { timeout: 30_000, interval: 100 });
      await session.flush();
      expect(errors).toEqual([]);
      expect(seen).toEqual(['Session Started', 'Before', 'After']);
    } finally {
      await client.close();
      await stopChild(servers[servers.length - 1]!.child, 'SIGTERM');
      data.cleanup();
    }
  }, 60_000);
});
