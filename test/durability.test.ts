import { afterAll, describe, expect, it } from 'vitest';
import { startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('cas-durable-');
afterAll(() => dir.cleanup());

const auth = { authorization: 'Bearer K', 'x-app-id': 'P', 'content-type': 'application/json' };
const RANGE = encodeURIComponent(
  JSON.stringify([{ start: '2025-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' }]),
);

function batch(round: number, size: number) {
  return Array.from({ length: size }, (_, i) => ({
    type: 'track',
    event: 'Durable',
    session_id: `s-${round}-${i % 10}`,
    user_id: `u-${i % 10}`,
    event_id: `durable-${round}-${i}`,
    timestamp: new Date(Date.UTC(2025, 5, 1, 0, 0, i)).toISOString(),
    properties: { round, i },
  }));
}

async function countDurable(url: string): Promise<number> {
  const response = await fetch(`${url}/bc/v1/summary/event-counts?ranges=${RANGE}&event_name=Durable`, {
    headers: auth,
  });
  expect(response.status).toBe(200);
  const [count] = (await response.json()) as number[];
  return count ?? -1;
}

describe('durability (issue 7): a 200 from the queue survives kill -9 right after it', () => {
  it('keeps every acknowledged event across three SIGKILLs, and stores none twice', async () => {
    const args = ['--data-dir', dir.path, '--api-key', 'K', '--project', 'P'];
    let acknowledged = 0;
    for (let round = 0; round < 3; round++) {
      const { child, info } = await startServe(args);
      // What earlier rounds acknowledged is there after the restart.
      expect(await countDurable(info.url)).toBe(acknowledged);
      const response = await fetch(`${info.url}/bc/v1/events/queue`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(batch(round, 500)),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: 'ok', accepted: 500, duplicates: 0 });
      acknowledged += 500;
      // No grace period: the process dies the moment the acknowledgement is in hand.
      await stopChild(child, 'SIGKILL');
    }
    const { child, info } = await startServe(args);
    try {
      expect(await countDurable(info.url)).toBe(acknowledged);
      const again = await fetch(`${info.url}/bc/v1/events/queue`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(batch(2, 500)),
      });
      expect(await again.json()).toMatchObject({ accepted: 0, duplicates: 500 });
      expect(await countDurable(info.url)).toBe(acknowledged);
    } finally {
      expect(await stopChild(child)).toBe(0);
    }
  }, 120_000);
});
