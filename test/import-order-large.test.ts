import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv } from './helpers/cli.js';
import { queryDataDir, stateDifference } from './helpers/fingerprint.js';
import {
  CRASH,
  TURN_HEADER as HEADER,
  holdsDatabase,
  importRun,
  type JsonRecord,
  prng,
  shuffle,
  summaryOf,
  writeCsv,
} from './helpers/import-runs.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 14 at size, against the real CLI and its embedded service: 200,000 turns with explicit
 * session ids, shuffled and grouped by session, store every turn once (measured on the 2-core
 * machine: 11 s an import when idle, 30 s under load, so these two run only with CAS_LONG_TESTS=1;
 * `npm run bench -- import` reports their peak RSS); `timeout -s INT 5 cas import` off a terminal exits 130 with only the
 * interruption lines, and the re-run stores exactly what one uninterrupted run stores.
 */
const dir = tempDir('cas-import-large-');
afterAll(() => dir.cleanup());

const T0 = Date.UTC(2025, 0, 1);

/** `n` turns in sessions of 8 (one user each), ~13 sessions open at any time, a turn a minute. */
function turns(n: number): JsonRecord[] {
  const sessions = n / 8;
  const out: JsonRecord[] = [];
  for (let i = 0; i < n; i++) {
    const s = i % sessions;
    out.push({
      kind: 'turn',
      timestamp: new Date(T0 + s * 37_000 + Math.floor(i / sessions) * 60_000).toISOString(),
      session_id: `big-${s}`,
      user_id: `u${s % 3000}`,
      user: `question ${i}`,
      assistant: `answer ${i}`,
      model: 'gpt-4o-mini',
      prompt_tokens: 100 + (i % 50),
      completion_tokens: 200,
    });
  }
  return out;
}

/** Every turn stored once, every session complete and ended. */
async function expectEveryTurnOnce(dataDir: string, n: number): Promise<void> {
  const [stored] = await queryDataDir(
    dataDir,
    `SELECT count(*)::INTEGER AS turns, count(DISTINCT event_id)::INTEGER AS ids,
       count(DISTINCT properties->>'user')::INTEGER AS texts FROM events WHERE event = 'Conversation Turn'`,
  );
  expect(stored).toEqual({ turns: n, ids: n, texts: n });
  const [sessions] = await queryDataDir(
    dataDir,
    `SELECT count(*)::INTEGER AS sessions, count(ended_at)::INTEGER AS ended,
       (SELECT count(*)::INTEGER FROM (SELECT session_id FROM events WHERE event = 'Conversation Turn'
          GROUP BY session_id HAVING count(*) <> 8)) AS incomplete
     FROM sessions`,
  );
  expect(sessions).toEqual({ sessions: n / 8, ended: n / 8, incomplete: 0 });
}

const LONG = process.env.CAS_LONG_TESTS === '1';

describe.runIf(LONG)('200,000 records with explicit session ids (CAS_LONG_TESTS=1)', () => {
  const N = 200_000;
  const rows = turns(N);

  it('shuffled: exit 0, every turn stored once', { timeout: 300_000 }, async () => {
    const file = writeCsv(join(dir.path, 'shuffled-200k.csv'), shuffle(rows, prng(200)), HEADER);
    const data = join(dir.path, 'shuffled-200k');
    const run = await importRun([file], data, [], 280_000);
    expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
    expect(summaryOf(run)).toMatchObject({ records: N, rejected: 0, stopped: false });
    console.log(`200,000 shuffled records: cas import took ${(run.ms / 1000).toFixed(1)} s`);
    await expectEveryTurnOnce(data, N);
  });

  it('grouped by session: exit 0, every turn stored once', { timeout: 300_000 }, async () => {
    const grouped = [...rows].sort((a, b) => String(a.session_id).localeCompare(String(b.session_id)));
    const file = writeCsv(join(dir.path, 'grouped-200k.csv'), grouped, HEADER);
    const data = join(dir.path, 'grouped-200k');
    const run = await importRun([file], data, [], 280_000);
    expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
    expect(summaryOf(run)).toMatchObject({ records: N, rejected: 0, stopped: false });
    console.log(`200,000 records grouped by session: cas import took ${(run.ms / 1000).toFixed(1)} s`);
    await expectEveryTurnOnce(data, N);
  });
});

describe('interrupted off a terminal (issue 14)', () => {
  // Large enough that 5 s is mid-run on an idle machine too (one run of these 120,000 took 9 s there,
  // 80,000 under 5 s): an import reads and sorts the whole input before it sends, so the signal may
  // land in either phase. 200,000 cost the suite ~40 s of CPU more for nothing this test checks.
  const N = 120_000;
  let big: string;
  let truth: string;

  beforeAll(async () => {
    big = writeCsv(join(dir.path, 'big.csv'), shuffle(turns(N), prng(5)), HEADER);
    truth = join(dir.path, 'big-one-run');
    const run = await importRun([big], truth, [], 170_000);
    expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
    console.log(
      `${N.toLocaleString('en-US')} shuffled records, one uninterrupted run: ${(run.ms / 1000).toFixed(1)} s`,
    );
  }, 180_000);

  it('timeout -s INT 5 cas import big.csv exits 130 with only the interruption lines; the re-run completes exactly', {
    timeout: 180_000,
  }, async () => {
    const data = join(dir.path, 'big-interrupted');
    // timeout(1) itself exits 124 when it had to signal; --preserve-status passes on the command's code.
    const interrupted = spawnSync(
      'timeout',
      ['--preserve-status', '-s', 'INT', '5', process.execPath, CAS_BIN, 'import', big, '--data-dir', data],
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 60_000 },
    );
    const stderr = interrupted.stderr;
    expect(interrupted.status, stderr).toBe(130);
    expect(stderr).not.toMatch(CRASH);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length, stderr).toBeGreaterThan(0);
    // Soft: the re-run below is checked whatever stderr held.
    for (const line of lines) expect.soft(line, stderr).toMatch(/^cas: interrupted\b/);

    const again = await importRun([big], data, [], 170_000);
    expect(again.code, again.stderr.slice(0, 2000)).toBe(0);
    await expectEveryTurnOnce(data, N);
    const difference = await stateDifference(truth, data);
    if (difference) expect.fail(`interrupted, then run again vs one run:\n${difference}`);
  });

  it('SIGINT while reading: stopped, and the records never read are counted (or said to be unknown)', {
    timeout: 120_000,
  }, async () => {
    const data = join(dir.path, 'big-reading');
    const child = spawnTracked(process.execPath, [CAS_BIN, 'import', big, '--data-dir', data, '--json'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const ended = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!holdsDatabase(child.pid ?? 0, data) && child.exitCode === null && Date.now() < deadline)
      await sleep(5);
    child.kill('SIGINT');
    const code = await ended;
    expect(code, stderr).toBe(130);
    const summary = JSON.parse(stdout) as Record<string, unknown>;
    expect(summary.stopped, stdout).toBe(true);
    expect(Number(summary.records), 'the signal landed while reading').toBeLessThan(N);
    if (summary.unread !== null) expect(Number(summary.records) + Number(summary.unread), stdout).toBe(N);
  });
});
