import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * The chart subcommands of issue 18 through the built CLI, talking to one `cas serve` over the data
 * directory (so no command pays for opening the store): turns with
 * random completion_tokens are imported, and `--measure p95:completion_tokens` must equal the
 * percentile this test computes from the rows it wrote (linear interpolation, DuckDB's
 * quantile_cont); the funnel, intents, sentiment and conversations charts answer on the same data.
 */

const dir = tempDir('cas-chart-analysis-');
const env = { CAS_DATA_DIR: join(dir.path, 'data') };
let serve: ChildProcess | undefined;
afterAll(async () => {
  if (serve) await stopChild(serve);
  dir.cleanup();
});

const RANGE = ['--from', '2025-02-01', '--to', '2025-02-28', '--tz', 'UTC', '--period', 'month'];
const INTENTS = ['billing', 'refund', 'greeting'];
const WORDS = ['thanks so much, great help', 'this is terrible and broken', 'where is my order'];

/** One generated project: rows of turns, each with its own tokens, user, conversation and intent. */
const rowsArb = fc.array(
  fc.record({
    user: fc.integer({ min: 1, max: 6 }),
    conv: fc.integer({ min: 1, max: 8 }),
    minute: fc.integer({ min: 0, max: 27 * 24 * 60 }),
    tokens: fc.integer({ min: 1, max: 4000 }),
    intent: fc.constantFrom(...INTENTS),
    words: fc.constantFrom(...WORDS),
  }),
  { minLength: 20, maxLength: 60 },
);
const rows = fc.sample(rowsArb, { numRuns: 1, seed: Number(process.env.CAS_TEST_SEED ?? 18) })[0]!;

function percentile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  return s[lo]! + (s[Math.ceil(pos)]! - s[lo]!) * (pos - lo);
}

async function chart(args: string[]): Promise<unknown> {
  const result = await runCli(['chart', ...args, ...RANGE, '--json'], { env });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

beforeAll(async () => {
  serve = (await startServe(['--data-dir', env.CAS_DATA_DIR], env)).child;
  const start = Date.parse('2025-02-01T00:00:00Z');
  const csv = [
    'kind,timestamp,user_id,session_id,conversation_id,user,assistant,model,completion_tokens,intent',
    ...rows.map((r) => {
      const ts = new Date(start + r.minute * 60_000).toISOString();
      // One session per user, so conversations stay inside their session whatever the row order.
      return `turn,${ts},u${r.user},s${r.user},c${r.conv}-u${r.user},"${r.words}",ok,gpt-4o,${r.tokens},${r.intent}`;
    }),
  ].join('\n');
  const file = join(dir.path, 'turns.csv');
  writeFileSync(file, `${csv}\n`);
  const imported = await runCli(['import', file, '-q'], { env });
  expect(imported.code, imported.stderr).toBe(0);
}, 120_000);

describe('cas chart with the charts of issue 18', () => {
  it('--measure p95:completion_tokens equals the percentile of the generated rows', async () => {
    type Seg = Array<{ measure: string; points: Array<{ total: number; value: number }> }>;
    const [out, sum] = (await Promise.all([
      chart(['segmentation', '--event', 'Conversation Turn', '--measure', 'p95:completion_tokens']),
      chart(['segmentation', '--event', 'Conversation Turn', '--measure', 'sum:completion_tokens']),
    ])) as [Seg, Seg];
    expect(out[0]!.measure).toBe('p95:completion_tokens');
    expect(out[0]!.points[0]!.total).toBe(rows.length);
    expect(out[0]!.points[0]!.value).toBeCloseTo(
      percentile(
        rows.map((r) => r.tokens),
        0.95,
      ),
      6,
    );
    expect(sum[0]!.points[0]!.value).toBe(rows.reduce((s, r) => s + r.tokens, 0));
  }, 60_000);

  it('funnel, intents, sentiment and conversations answer on the same data', async () => {
    const [funnel, intents, sentiment, prompts] = (await Promise.all([
      chart(['funnel', '--event', 'Conversation Started', '--event', 'Conversation Turn', '--window', '1h']),
      chart(['intents']),
      chart(['sentiment', '--intent', 'Any Intent']),
      chart(['conversations', '--analyse', 'prompts']),
    ])) as [
      { events: Array<{ count: number }> },
      { slices: Array<{ label: string; value: number }> },
      { slices: Array<{ value: number }> },
      { points: Array<{ total: number }> },
    ];
    // Every conversation starts at its first turn's instant, so each user converts at once.
    const users = new Set(rows.map((r) => r.user)).size;
    expect(funnel.events.map((e) => e.count)).toEqual([users, users]);
    const pairs = (list: typeof rows) => new Set(list.map((r) => `${r.user}-${r.conv}`)).size;
    expect(intents.slices.length).toBeGreaterThan(0);
    for (const slice of intents.slices) {
      expect(slice.value).toBe(pairs(rows.filter((r) => r.intent === slice.label)));
    }
    // Every conversation has an intent and a summary, so the split covers all of them.
    expect(sentiment.slices.reduce((s, x) => s + x.value, 0)).toBe(pairs(rows));
    expect(prompts.points[0]!.total).toBe(rows.length);
  }, 60_000);

  it('names the flag when a measure or a chart flag is wrong', async () => {
    const [bad, misplaced] = await Promise.all([
      runCli(['chart', 'segmentation', '--event', 'Turn', '--measure', 'p42:cost', '--print-controls'], {
        env,
      }),
      runCli(['chart', 'funnel', '--event', 'Turn', '--analyse', 'duration', '--print-controls'], { env }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--measure "p42:cost": unknown aggregate "p42"');
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--analyse does not apply to the funnel chart');
  });
});
