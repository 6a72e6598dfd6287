import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { startService } from '../src/service/service.js';
import { CAS_BIN, cleanEnv, runCli } from './helpers/cli.js';
import { startFlakyProxy } from './helpers/flaky-proxy.js';
import {
  checkpoints,
  countAt,
  countInDataDir,
  FIXTURES,
  ingestAvailable,
  writeTurnsCsv,
} from './helpers/import.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

// 5.4 MB: over the 4 MB from which the embedded service gets a thread of its own, as in a real backfill.
const BIG = 40_000;

/**
 * `cas import` end to end: the built CLI as a child process, the real service over real DuckDB files.
 * Ingestion is built concurrently; until `POST /events/queue` and `event-counts` exist these skip.
 */
let ready = false;
const dir = tempDir('cas-import-');
beforeAll(async () => {
  ready = await ingestAvailable();
});
afterAll(() => dir.cleanup());

function needIngest(ctx: TestContext): void {
  if (!ready) ctx.skip('the service has no /events/queue and /summary/event-counts yet');
}

const fixtures = ['turns.csv', 'events.jsonl', 'turns-more.csv.gz'].map((f) => join(FIXTURES, f));
const summaryOf = (stdout: string) =>
  JSON.parse(stdout) as Record<
    'records' | 'events' | 'accepted' | 'duplicates' | 'rejected' | 'batches' | 'retries' | 'skipped',
    number
  >;

describe('cas import into the embedded service', () => {
  it('keeps one checkpoint of an export imported again after it grew, and those of other inputs', async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'grown');
    const file = join(dir.path, 'grown.csv');
    copyFileSync(join(FIXTURES, 'turns.csv'), file);
    const other = join(dir.path, 'other.csv');
    copyFileSync(join(FIXTURES, 'turns.csv'), other);
    const names = () => readdirSync(join(data, 'imports')).filter((f) => f.endsWith('.json'));
    expect((await runCli(['import', other, '--data-dir', data, '--json'])).code).toBe(0);
    const [others] = names();
    expect((await runCli(['import', file, '--data-dir', data, '--json'])).code).toBe(0);
    const first = names();
    expect(first).toHaveLength(2);
    expect(checkpoints(data).every((c) => c.complete)).toBe(true);
    // A day's export appended to it: a new version, a new fingerprint.
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}turn,2025-02-01T09:00:00.000Z,u01,And now?,Now this.,gpt-4o-mini,10,10,other,ios\n`,
    );
    const again = await runCli(['import', file, '--data-dir', data, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again.stdout)).toMatchObject({ records: 157, rejected: 0 });
    const after = names();
    // The other input's checkpoint stays; the grown file's earlier one is gone, its new one written.
    expect(after).toHaveLength(2);
    expect(after.filter((n) => first.includes(n))).toEqual([others]);
    expect(checkpoints(data).every((c) => c.complete)).toBe(true);
  });

  it('finds its checkpoint in a data directory renamed or reached through a symlink', async (ctx) => {
    needIngest(ctx);
    const first = join(dir.path, 'named-once');
    expect((await runCli(['import', ...fixtures, '--data-dir', first, '--json'])).code).toBe(0);
    // Named by its path, the checkpoint was lost to a rename or a link: the run read and sent it all again.
    const renamed = join(dir.path, 'named-twice');
    renameSync(first, renamed);
    const link = join(dir.path, 'named-link');
    symlinkSync(renamed, link);
    for (const via of [renamed, link]) {
      const again = await runCli(['import', ...fixtures, '--data-dir', via, '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect(summaryOf(again.stdout), via).toMatchObject({ records: 384, skipped: 384, events: 0 });
    }
  });

  // It stopped after storing everything, exit 5, saying "the checkpoint is saved" (none was) and
  // "run as the owner of the data directory" to its owner (found by probing).
  it('with a checkpoint folder it cannot write: imports everything, says so once, and a re-run sends it all again', async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'unwritable-imports');
    expect((await runCli(['identify', '--id', 'seed', '--data-dir', data])).code).toBe(0);
    const imports = join(data, 'imports');
    rmSync(imports, { recursive: true, force: true });
    // sysfs takes no new files, even from root (CI runs as root, where a folder's mode is no bar).
    if (process.getuid?.() === 0) symlinkSync('/sys/kernel', imports);
    else {
      mkdirSync(imports);
      chmodSync(imports, 0o555);
    }
    for (const run of [1, 2]) {
      const result = await runCli(['import', ...fixtures, '--data-dir', data, '--json']);
      expect(result.code, result.stderr).toBe(0);
      expect(summaryOf(result.stdout)).toMatchObject({
        records: 384,
        skipped: 0,
        events: 474,
        accepted: run === 1 ? 474 : 0,
        duplicates: run === 1 ? 0 : 474,
      });
      const told = result.stderr.split('\n').filter((line) => line.includes('cannot save the checkpoint'));
      expect(told).toEqual([
        `cas: cannot save the checkpoint (permission denied in ${imports}); the import goes on without one: if it stops, running it again resumes from an earlier one if any, else sends everything again, and nothing is stored twice`,
      ]);
    }
    // A folder where the checkpoint goes: named itself (it was "it is a folder in imports"), no `.tmp` left.
    rmSync(imports, { recursive: true, force: true });
    expect((await runCli(['import', ...fixtures, '--data-dir', data, '--json'])).code).toBe(0);
    const [saved] = readdirSync(imports);
    rmSync(join(imports, saved!));
    mkdirSync(join(imports, saved!));
    const again = await runCli(['import', ...fixtures, '--data-dir', data, '--restart', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`cas: cannot save the checkpoint (${join(imports, saved!)} is a folder)`);
    expect(readdirSync(imports)).toEqual([saved]);
  }, 120_000);

  // Resumed by path, size, time and the first 64 KiB, an input edited in place (its time restored, as
  // `cp -p` or `rsync -t` do) resumed at a position of another sorted run, or was "already imported";
  // a position past the end was trusted, and the import marked complete (found by probing: rows lost).
  it('sets aside a checkpoint of other bytes, or of a position past the input, and imports from the start', async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'edited-in-place');
    const file = join(dir.path, 'edited.csv');
    await writeTurnsCsv(file, 3000);
    // A whole second, which utimes gives back exactly.
    const when = new Date('2025-06-01T12:00:00Z');
    utimesSync(file, when, when);
    expect((await runCli(['import', file, '--kind', 'turn', '--data-dir', data, '--json'])).code).toBe(0);
    const edit = () => {
      const text = readFileSync(file, 'utf8');
      // Past the first 64 KiB, the same length: a word of one answer in capitals.
      const at = text.indexOf('\n', 70_000) + 1;
      const line = text.slice(at, text.indexOf('\n', at));
      const edited = line.replace('Open Settings', 'Open SETTINGS');
      expect(edited).not.toBe(line);
      writeFileSync(file, text.slice(0, at) + edited + text.slice(at + line.length));
      utimesSync(file, when, when);
    };
    edit();
    const again = await runCli(['import', file, '--kind', 'turn', '--data-dir', data, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      'cas: this input changed since it was imported (its size and time did not)',
    );
    expect(summaryOf(again.stdout)).toMatchObject({ records: 3000, skipped: 0 });
    expect(summaryOf(again.stdout).accepted).toBeGreaterThan(0);
    // A checkpoint part-way, of other bytes, then of a position past the input's records.
    const [name] = readdirSync(join(data, 'imports')).filter((f) => f.endsWith('.json'));
    const path = join(data, 'imports', name ?? '');
    const written = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    for (const [change, said] of [
      [{ content: '00000000', position: 1500 }, 'cas: this input changed since its checkpoint was written'],
      [
        { position: 999_999 },
        'cas: the checkpoint of this input names record 999,999 of its sorted records, but it holds 3,000',
      ],
    ] as const) {
      writeFileSync(path, JSON.stringify({ ...written, complete: false, ...change }));
      const resumed = await runCli(['import', file, '--kind', 'turn', '--data-dir', data, '--json']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(said);
      expect(summaryOf(resumed.stdout)).toMatchObject({ records: 3000, skipped: 0, accepted: 0 });
    }
    // A resume set aside reports its rejections, as any run from the start does (review).
    const bad = join(dir.path, 'one-bad.csv');
    writeFileSync(
      bad,
      'timestamp,user_id,user,assistant\n2025-01-01T00:00:00Z,u,hi,yo\nnot a time,u,hi,yo\n',
    );
    const badData = join(dir.path, 'one-bad');
    expect((await runCli(['import', bad, '--kind', 'turn', '--data-dir', badData, '--json'])).code).toBe(6);
    const [badName] = readdirSync(join(badData, 'imports')).filter((f) => f.endsWith('.json'));
    const badPath = join(badData, 'imports', badName ?? '');
    const badPoint = JSON.parse(readFileSync(badPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(
      badPath,
      JSON.stringify({ ...badPoint, complete: false, position: 1, content: '00000000' }),
    );
    const reported = await runCli(['import', bad, '--kind', 'turn', '--data-dir', badData, '--json']);
    expect(reported.code).toBe(6);
    expect(reported.stderr).toContain('cas: this input changed since its checkpoint was written');
    expect(reported.stderr).toContain(`${bad}:3: `);
  }, 120_000);

  it('stores every fixture event exactly once; a re-run sends nothing, --restart only duplicates', async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'fixtures');
    const first = await runCli(['import', ...fixtures, '--data-dir', data, '--json']);
    // Nothing but progress lines, which a loaded machine makes slow enough to print (every 5 s).
    expect(first.stderr.split('\n').filter((line) => line !== '' && !line.includes(' · '))).toEqual([]);
    expect(first.code).toBe(0);
    const s1 = summaryOf(first.stdout);
    expect(s1).toMatchObject({ records: 384, events: 474, accepted: 474, duplicates: 0, rejected: 0 });
    const stored = await countInDataDir(data);
    expect(stored).toBeGreaterThanOrEqual(474);

    const again = await runCli(['import', ...fixtures, '--data-dir', data, '--json']);
    expect(again.code).toBe(0);
    expect(summaryOf(again.stdout)).toMatchObject({ records: 384, skipped: 384, events: 0, accepted: 0 });
    expect(again.stderr).toMatch(/already imported/);

    const restart = await runCli(['import', ...fixtures, '--data-dir', data, '--json', '--restart']);
    expect(restart.code).toBe(0);
    expect(summaryOf(restart.stdout)).toMatchObject({ events: 474, accepted: 0, duplicates: 474 });
    expect(await countInDataDir(data)).toBe(stored);
  }, 120_000); // three imports and three opens of the store: 12 s idle, 30 s on a loaded 2-core machine

  // The checkpoint said "already imported" over a store that no longer held the import (exit 0,
  // nothing stored; found by probing, after the README's own advice to restore a damaged store).
  it('into a store restored from a backup taken before it: imports again, not "already imported"', async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'restored');
    expect((await runCli(['identify', '--id', 'seed', '--data-dir', data])).code).toBe(0);
    const backup = join(dir.path, 'restored-backup.duckdb');
    copyFileSync(join(data, 'cas.duckdb'), backup);
    expect((await runCli(['import', ...fixtures, '--data-dir', data, '--json'])).code).toBe(0);
    const stored = await countInDataDir(data);
    copyFileSync(backup, join(data, 'cas.duckdb'));
    rmSync(join(data, 'cas.duckdb.wal'), { force: true });
    const again = await runCli(['import', ...fixtures, '--data-dir', data, '--json']);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/says 384 records were imported, but the service does not hold its events/);
    expect(summaryOf(again.stdout)).toMatchObject({ records: 384, skipped: 0, events: 474, accepted: 474 });
    expect(await countInDataDir(data)).toBe(stored);
  }, 120_000);

  // Found by probing: an overlapping import before the backup held the run's last event, the one
  // witness the checkpoint named, so the re-run said "already imported" and the early turn stayed lost.
  it("into a restored backup that holds the run's last event from an overlapping import: imports what it lacks", async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'restored-overlap');
    const header = 'timestamp,user_id,session_id,user,assistant';
    const late = '2024-03-02T10:00:00Z,u1,S2,late q,late a';
    const newer = join(dir.path, 'overlap-newer.csv');
    const full = join(dir.path, 'overlap-full.csv');
    writeFileSync(newer, `${header}\n${late}\n`);
    writeFileSync(full, `${header}\n2024-03-01T10:00:00Z,u1,S1,early q,early a\n${late}\n`);
    const turn = ['--kind', 'turn', '--data-dir', data, '--json'];
    expect((await runCli(['import', newer, ...turn])).code).toBe(0);
    const backup = join(dir.path, 'restored-overlap-backup.duckdb');
    copyFileSync(join(data, 'cas.duckdb'), backup);
    expect((await runCli(['import', full, ...turn])).code).toBe(0);
    const stored = await countInDataDir(data);
    copyFileSync(backup, join(data, 'cas.duckdb'));
    rmSync(join(data, 'cas.duckdb.wal'), { force: true });
    const again = await runCli(['import', full, ...turn]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/says 2 records were imported, but the service does not hold its events/);
    expect(summaryOf(again.stdout)).toMatchObject({ records: 2, skipped: 0 });
    expect(await countInDataDir(data)).toBe(stored);
  }, 120_000);

  it('imports every good row of a malformed file, reports each bad one with file:line, exits 6', async (ctx) => {
    needIngest(ctx);
    const good = [
      '2024-03-01T10:00:00Z,u1,How do I reset it?,Open settings,gpt-4o,12',
      '2024-03-01T10:02:00Z,u1,Thanks,You are welcome,gpt-4o,8',
      '2024-03-01T11:00:00Z,u2,"Where is my order, please?","On its way, ""tomorrow""",gpt-4o-mini,30',
    ];
    const header = 'timestamp,user_id,user,assistant,model,prompt_tokens';
    const bad = Buffer.concat([
      Buffer.from(
        [
          header,
          good[0],
          'next tuesday,u1,When?,Soon,gpt-4o,5', // line 3: bad timestamp
          '2024-03-01T10:01:00Z,u1,,No question,gpt-4o,5', // line 4: missing utterance
          good[1],
          '2024-03-01T10:03:00Z,u1,Hi,Hello,gpt-4o,lots', // line 6: wrong type
          '2024-03-01T10:04:00Z,u1,"Broken "quote,x,gpt-4o,5', // line 7: broken quoting
          '',
        ].join('\n'),
      ),
      Buffer.from('2024-03-01T10:05:00Z,u1,caf'),
      Buffer.from([0xe9, 0x21]), // line 8: latin-1 é, not UTF-8
      Buffer.from(`,Hello,gpt-4o,5\n${good[2]}\n`),
    ]);
    const file = join(dir.path, 'malformed.csv');
    writeFileSync(file, bad);
    const clean = join(dir.path, 'clean.csv');
    writeFileSync(clean, `${[header, ...good].join('\n')}\n`);
    const rejects = join(dir.path, 'rejects.jsonl');
    const data = join(dir.path, 'malformed');
    const run = await runCli([
      'import',
      file,
      '--kind',
      'turn',
      '--data-dir',
      data,
      '--json',
      '--reject-file',
      rejects,
    ]);
    expect(run.code).toBe(6);
    const lines = run.stderr.trim().split('\n');
    expect(lines.map((l) => l.slice(0, l.indexOf(': ')))).toEqual([3, 4, 6, 7, 8].map((n) => `${file}:${n}`));
    expect(run.stderr).toMatch(/:3: timestamp "next tuesday"/);
    expect(run.stderr).toMatch(/:4: missing user utterance/);
    expect(run.stderr).toMatch(/:6: prompt_tokens must be a number, got "lots"/);
    expect(run.stderr).toMatch(/:7: broken quoting/);
    expect(run.stderr).toMatch(/:8: invalid UTF-8/);
    expect(summaryOf(run.stdout)).toMatchObject({ records: 8, rejected: 5 });
    // Run again, it is already imported, and says so of the same 8 records.
    const again = await runCli(['import', file, '--kind', 'turn', '--data-dir', data, '--json']);
    expect(again.stderr).toMatch(/already imported/);
    expect(summaryOf(again.stdout)).toMatchObject({ records: 8, skipped: 3, rejected: 5 });
    const written = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(written.map((r) => [r.line, typeof r.reason])).toEqual([3, 4, 6, 7, 8].map((n) => [n, 'string']));
    expect(written[0]).toMatchObject({ file, record: { timestamp: 'next tuesday', user_id: 'u1' } });
    // The good rows are stored as if the bad ones had never been there.
    const cleanData = join(dir.path, 'clean');
    expect((await runCli(['import', clean, '--kind', 'turn', '--data-dir', cleanData])).code).toBe(0);
    expect(await countInDataDir(data)).toBe(await countInDataDir(cleanData));
  }, 90_000); // 14 s on a loaded 2-core machine

  // The embedded service trusts what the importer validated: an event named as a usage was a TypeError
  // that stopped every run at that batch, and a lone surrogate was stored, failing every later chart
  // that read its trait with a 500 (found by probing; `cas serve` refused both with a 400).
  it('refuses what the service would before the embedded service sees it: the rest is stored and charts answer', async (ctx) => {
    needIngest(ctx);
    const at = (m: number) => `2024-03-01T10:0${m}:00Z`;
    const lines = [
      { kind: 'event', event: 'Conversation Usage', timestamp: at(0), user_id: 'u1' },
      { kind: 'event', event: 'Clicked', timestamp: at(1), user_id: 'u1', properties: { p: 'ok' } },
      { kind: 'identify', timestamp: at(2), id: 'u2', traits: { plan: 'pro' } },
    ].map((l) => JSON.stringify(l));
    lines.splice(1, 0, `{"kind":"identify","timestamp":"${at(3)}","id":"u1","traits":{"plan":"x\\udc00"}}`);
    const file = join(dir.path, 'service-refuses.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const data = join(dir.path, 'service-refuses');
    const run = await runCli(['import', file, '--data-dir', data, '--json']);
    expect(run.code, run.stderr).toBe(6);
    expect(run.stderr.trim().split('\n')).toEqual([
      `${file}:1: event "Conversation Usage" is a usage event: properties: required`,
      `${file}:2: traits.plan: holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); send valid Unicode`,
    ]);
    expect(summaryOf(run.stdout)).toMatchObject({ records: 4, rejected: 2 });
    const chart = await runCli([
      'chart',
      'users',
      '--trait',
      'plan',
      '--from',
      '2024-03-01',
      '--to',
      '2024-03-01',
      '--tz',
      'UTC',
      '--data-dir',
      data,
    ]);
    expect(chart.code, chart.stderr).toBe(0);
    expect(chart.stdout).toContain('pro');
  }, 60_000);

  // 40,000 records (there were 200,000, then 80,000): the kill still lands far from both ends, and
  // on a loaded 2-core machine the larger sizes took most of the suite's time.
  it(`after SIGKILL part-way through ${BIG.toLocaleString('en')} records, a re-run leaves every event stored exactly once`, async (ctx) => {
    needIngest(ctx);
    const file = join(dir.path, 'big.csv');
    await writeTurnsCsv(file, BIG);
    // The uninterrupted import to compare with runs alongside (two processes, two data directories).
    const fresh = join(dir.path, 'fresh');
    const uninterrupted = runCli(['import', file, '--kind', 'turn', '--data-dir', fresh]);
    const killed = join(dir.path, 'killed');
    const child = spawnTracked(
      process.execPath,
      [CAS_BIN, 'import', file, '--kind', 'turn', '--data-dir', killed, '--json'],
      {
        env: cleanEnv(),
        stdio: 'ignore',
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Kill once a checkpoint shows real progress, well before the end.
    for (;;) {
      const cp = checkpoints(killed)[0];
      if (cp && cp.position > BIG / 4) break;
      if (child.exitCode !== null) throw new Error('the import finished before it could be killed');
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    expect(await exited).toBeNull();
    const at = checkpoints(killed)[0];
    expect(at?.complete).toBe(false);
    expect(at?.position).toBeLessThan(BIG);

    const resumed = await runCli(['import', file, '--kind', 'turn', '--data-dir', killed, '--json']);
    expect(resumed.code).toBe(0);
    expect(summaryOf(resumed.stdout).skipped).toBe(at?.position);
    expect(summaryOf(resumed.stdout).records).toBe(BIG);
    expect((await uninterrupted).code).toBe(0);
    expect(await countInDataDir(killed)).toBe(await countInDataDir(fresh));
  }, 600_000);
});

describe('cas import through a misbehaving proxy', () => {
  it('completes despite 429 + Retry-After and dropped connections, with the same stored counts', async (ctx) => {
    needIngest(ctx);
    const data = join(dir.path, 'proxied');
    const service = await startService({
      dataDir: data,
      port: 0,
      provision: { apiKey: 'proxy-key', projectId: 'proxy-project' },
    });
    const proxy = await startFlakyProxy(service.url, {
      rateLimitEvery: 5,
      dropEvery: 7,
      retryAfterSeconds: 1,
    });
    try {
      const args = ['--endpoint', proxy.url, '--api-key', 'proxy-key', '--project', 'proxy-project'];
      const run = await runCli([
        'import',
        ...fixtures,
        ...args,
        '--batch-size',
        '25',
        '--data-dir',
        data,
        '--json',
      ]);
      expect(run.code).toBe(0);
      const summary = summaryOf(run.stdout);
      expect(summary).toMatchObject({ events: 474, rejected: 0 });
      expect(summary.accepted + summary.duplicates).toBeGreaterThanOrEqual(474);
      expect(summary.retries).toBeGreaterThan(0);
      expect(proxy.counts.limited).toBeGreaterThan(0);
      expect(proxy.counts.droppedAfter).toBeGreaterThan(0);
      const stored = await countAt(service.url, 'proxy-key', 'proxy-project');
      const direct = join(dir.path, 'direct');
      expect((await runCli(['import', ...fixtures, '--data-dir', direct])).code).toBe(0);
      expect(stored).toBe(await countInDataDir(direct));
    } finally {
      await proxy.close();
      await service.close();
    }
  }, 120_000);
});
