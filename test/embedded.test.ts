import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { holdDataDir } from './helpers/lock-holder.js';
import { tempDir } from './helpers/temp.js';

// The built package, because the worker entry is a built file beside embedded.js (npm test builds first).
const { startEmbeddedService } = (await import(
  '../dist/service/embedded.js' as string
)) as typeof import('../src/service/embedded.js');
const { DataDirLockedError } = (await import(
  '../dist/service/lock-error.js' as string
)) as typeof import('../src/service/lock-error.js');

/**
 * The embedded service as `connect()` starts it, from the built package (the worker entry is a built
 * file): on a worker thread, answering over loopback, releasing the data directory when closed.
 */
const dirs: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.cleanup();
});

function dataDir(): string {
  const dir = tempDir('cas-embedded-');
  dirs.push(dir);
  return join(dir.path, 'data');
}

async function identify(s: { url: string; apiKey: string; projectId: string }, id: string) {
  const res = await fetch(`${s.url}/bc/v1/user/identify`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${s.apiKey}`,
      'x-app-id': s.projectId,
    },
    body: JSON.stringify({ id, traits: { plan: 'pro' } }),
  });
  return { status: res.status, body: (await res.json()) as { user_id?: string; created_at?: string } };
}

describe('embedded service', () => {
  it('runs on a worker thread when asked (a big import), serves the data directory, and keeps what it stored after close', async () => {
    const dir = dataDir();
    const logs: string[] = [];
    const first = await startEmbeddedService({ dataDir: dir, log: (l) => logs.push(l), thread: true });
    expect(first.where).toBe('thread');
    expect(threadId).toBe(0);
    const created = await identify(first, 'alice');
    expect(created.status).toBe(200);
    await first.close();

    // Closed means released: a second service opens the same file and finds the same user.
    // Any other command's runs on the caller's thread.
    const second = await startEmbeddedService({ dataDir: dir, log: () => undefined });
    try {
      expect(second.where).toBe('inline');
      const again = await identify(second, 'alice');
      expect(again.status).toBe(200);
      expect(again.body.user_id).toBe(created.body.user_id);
      expect(again.body.created_at).toBe(created.body.created_at);
    } finally {
      await second.close();
    }
  });

  // DuckDB's lock keeps out other processes only: two services of one process on one file lost
  // events (found by probing the library). Callers share one; one started while it closes waits.
  it('is one service for every caller of the process over a directory; a caller during its close gets the next one', async () => {
    const dir = dataDir();
    const options = { dataDir: dir, log: () => undefined, holdsProcess: false };
    const [a, b] = await Promise.all([startEmbeddedService(options), startEmbeddedService(options)]);
    expect(b.url).toBe(a.url);
    expect((await identify(a, 'shared-a')).status).toBe(200);
    await a.close();
    // Still b's: one caller's close lets go of its share only.
    expect((await identify(b, 'shared-b')).status).toBe(200);
    const closing = b.close();
    const c = await startEmbeddedService(options);
    try {
      await closing;
      expect(c.url).not.toBe(a.url);
      const answer = await identify(c, 'shared-c');
      expect(answer.status).toBe(200);
    } finally {
      await c.close();
    }
  });

  it('reports a data directory held by another service as DataDirLockedError, across the thread', async () => {
    const dir = dataDir();
    const holder = await holdDataDir(dir);
    try {
      const attempt = startEmbeddedService({ dataDir: dir, log: () => undefined });
      await expect(attempt).rejects.toBeInstanceOf(DataDirLockedError);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
