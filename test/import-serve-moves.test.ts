import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { queryDataDir } from './helpers/fingerprint.js';
import { tempDir } from './helpers/temp.js';

/**
 * `cas import` into the `cas serve` holding its data directory (server.json), which is restarted on
 * another port part-way: the import kept retrying the old port and stopped with exit 7 while
 * server.json named the new one (found by probing). It now sends the rest there, every record once.
 */
const dir = tempDir('cas-import-moves-');
const servers: Array<Awaited<ReturnType<typeof startServe>>> = [];
afterAll(async () => {
  for (const s of servers) await stopChild(s.child, 'SIGKILL');
  dir.cleanup();
});

// At 10 a request, one at a time, 4-8 s of sending by hand (20-40 ms a request against a cas serve
// on a 2-core machine); the first server stops ~0.3 s after its first batch is stored and the second
// is up ~1 s later. Were the import ever done before that, the "moved" line would be missing.
const TURNS = 2_000;

async function storedTurns(url: string, key: string, project: string): Promise<boolean> {
  const res = await fetch(`${url}/bc/v1/agg/event-names`, {
    headers: { authorization: `Bearer ${key}`, 'x-app-id': project },
  }).catch(() => undefined);
  return res?.status === 200 && ((await res.json()) as string[]).includes('Conversation Turn');
}

describe('cas import into a cas serve that restarts on another port', () => {
  it('follows it there and stores every record once', async () => {
    const data = join(dir.path, 'data');
    const file = join(dir.path, 'turns.csv');
    const rows = ['timestamp,user_id,session_id,user,assistant'];
    for (let i = 0; i < TURNS; i++) {
      const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
      rows.push(`${at},u${i % 50},s${i % 50}-${Math.floor(i / 500)},question ${i},answer ${i}`);
    }
    writeFileSync(file, `${rows.join('\n')}\n`);
    const first = await startServe(['--data-dir', data]);
    servers.push(first);
    // Small batches, one at a time: the import is still sending when the server restarts.
    // Room for the restart on a loaded machine: the first 5 retries wait at least 11.5 s in all.
    const patient = ['-v', '--retries', '8', '--retry-time', '120'];
    const small = ['--batch-size', '10', '--concurrency', '1', ...patient];
    const running = runCli(['import', file, '--kind', 'turn', '--data-dir', data, ...small], {
      timeoutMs: 150_000,
    });
    const { url, api_key: key, project_id: project } = first.info;
    while (!(await storedTurns(url, key, project))) await new Promise((r) => setTimeout(r, 100));
    expect(await stopChild(first.child, 'SIGTERM')).toBe(0);
    const second = await startServe(['--data-dir', data]);
    servers.push(second);
    expect(second.info.url).not.toBe(url);
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    const moved = `cas: the service moved to ${second.info.url}; sending there`;
    expect(result.stderr).toContain(moved);
    // It follows once server.json names the new server (a retry or two by hand), not after the
    // client's attempts at the old port run out (7 retries here, 5 by default: 7.5-15 s), as before.
    const beforeMove = result.stderr.slice(0, result.stderr.indexOf(moved));
    const retries = beforeMove.split('\n').filter((line) => line.startsWith('cas: retrying POST'));
    expect(retries.length, retries.join('\n')).toBeGreaterThan(0);
    expect(retries.length, retries.join('\n')).toBeLessThan(6);
    expect(await stopChild(second.child, 'SIGTERM')).toBe(0);
    const [counts] = await queryDataDir(
      data,
      "SELECT count(*)::INT AS n, count(DISTINCT properties->>'user')::INT AS texts FROM events WHERE event = 'Conversation Turn'",
    );
    expect(counts).toEqual({ n: TURNS, texts: TURNS });
  }, 180_000);
});
