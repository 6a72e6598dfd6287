import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { buildMappingSpec } from './mapping-spec.js';
import { newStats, type PipelineOptions, runPipeline } from './pipeline.js';
import type { InputFile } from './sources.js';
import type { Rejection, WireJson } from './types.js';

/**
 * The read helper (read-helper.ts) changes who stages a batch, never what is sent: a dry run with a
 * helper emits the same events in the same order, and reports the same refusals in the same order,
 * as one without. The helper runs from the build (`npm test` builds first), as the CLI runs it.
 */
const ENTRY = new URL('../../dist/importer/read-helper-worker.js', import.meta.url);
const dir = tempDir('cas-read-phase-');
afterAll(() => dir.cleanup());
const RECORDS = 20_000;
const csv = join(dir.path, 'turns.csv');
const jsonl = join(dir.path, 'turns.jsonl');

beforeAll(() => {
  expect(existsSync(fileURLToPath(ENTRY)), 'npm run build first').toBe(true);
  // Shuffled (by a fixed stride) so that each batch holds records of many sessions; some rows are bad.
  const csvRows = ['timestamp,session_id,user_id,user,assistant'];
  const jsonRows: string[] = [];
  for (let k = 0; k < RECORDS; k++) {
    const i = (k * 7919) % RECORDS;
    const t = new Date(Date.UTC(2024, 0, 1) + i * 20_000).toISOString();
    const time = i % 997 === 0 ? 'not a time' : t;
    csvRows.push(`${time},s${i % 300},u${i % 60},"question ${i}, please","answer ""${i}"""`);
    if (i % 1499 === 0) csvRows.push('"broken,quote');
    jsonRows.push(
      i % 1201 === 0
        ? '{"timestamp": oops}'
        : JSON.stringify({
            timestamp: time,
            session_id: `s${i % 300}`,
            user_id: `u${i % 60}`,
            user: `q ${i}`,
            assistant: 'a',
          }),
    );
  }
  writeFileSync(csv, `${csvRows.join('\n')}\n`);
  writeFileSync(jsonl, `${jsonRows.join('\n')}\n`);
});

async function dryRun(file: InputFile, extra: Partial<PipelineOptions> = {}) {
  const spec = buildMappingSpec({ kind: 'turn', tz: 'UTC' });
  if (!spec.ok) throw new Error(spec.error);
  const stats = newStats();
  const events: WireJson[] = [];
  const rejections: Rejection[] = [];
  const end = await runPipeline({
    files: [file],
    spec: spec.spec,
    session: {
      gapMs: 30 * 60_000,
      noEnd: false,
      keepDuplicates: false,
      extensions: { provisionalEnds: false, derivedSessions: false },
    },
    batchSize: 500,
    concurrency: 1,
    maxErrors: 1_000,
    onEvent: (e) => events.push(e),
    onReject: (r) => rejections.push(r),
    stats,
    tmpDir: dir.path,
    ...extra,
  });
  return { end, stats, events, rejections };
}

describe('reading with a helper thread', () => {
  for (const [name, file] of [
    ['CSV', { path: csv, display: 'turns.csv', format: 'csv' }],
    ['JSONL', { path: jsonl, display: 'turns.jsonl', format: 'jsonl' }],
  ] as const) {
    it(`${name}: the same events in the same order, the same refusals in input order`, async () => {
      const alone = await dryRun(file, { readHelper: false });
      let handled = 0;
      const helped = await dryRun(file, {
        readHelper: { entry: ENTRY, afterBytes: 0, awaitReady: true, onDone: (n) => (handled = n) },
      });
      expect(handled).toBeGreaterThan(0);
      expect(alone.end).toBe('complete');
      expect(helped.end).toBe('complete');
      expect(alone.rejections.length).toBeGreaterThan(10);
      expect(helped.rejections).toEqual(alone.rejections);
      expect(helped.events).toEqual(alone.events);
      expect(helped.stats).toMatchObject({
        records: alone.stats.records,
        staged: alone.stats.staged,
        rejected: alone.stats.rejected,
      });
    }, 60_000);
  }

  it('stops at the record whose refusal passes --max-errors, with or without a helper', async () => {
    const file = { path: csv, display: 'turns.csv', format: 'csv' } as const;
    const whole = await dryRun(file, { readHelper: false });
    // The 6th refusal; it stopped a read chunk (256 KB) or a helper's batches later, thousands past it.
    const stop = whole.rejections[5]!.seq;
    for (const readHelper of [false, { entry: ENTRY, afterBytes: 0, awaitReady: true }] as const) {
      const run = await dryRun(file, { maxErrors: 5, readHelper });
      expect(run.end).toBe('max-errors');
      expect(run.rejections).toEqual(whole.rejections.slice(0, 6));
      expect(run.stats).toMatchObject({
        rejected: 6,
        records: stop + 1,
        staged: stop + 1 - 6,
        unread: whole.stats.records - (stop + 1),
      });
    }
  }, 60_000);

  it('a helper that dies fails the run with its reason, without hanging', async () => {
    const dying = join(dir.path, 'dying-helper.mjs');
    writeFileSync(
      dying,
      `import { parentPort } from 'node:worker_threads';
       parentPort.postMessage({ type: 'ready' });
       parentPort.on('message', () => process.exit(3));`,
    );
    const file = { path: csv, display: 'turns.csv', format: 'csv' } as const;
    await expect(
      dryRun(file, { readHelper: { entry: pathToFileURL(dying), afterBytes: 0, awaitReady: true } }),
    ).rejects.toThrow(/read helper thread stopped/);
  }, 60_000);
});
