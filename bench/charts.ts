import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type ChartContext, makeContext } from '../src/service/charts/context.js';
import { conversationAnalysisChart } from '../src/service/charts/conversation-analysis.js';
import { funnelChart } from '../src/service/charts/funnel.js';
import { intentAnalysisChart } from '../src/service/charts/intent-analysis.js';
import { intentDistributionChart } from '../src/service/charts/intent-distribution.js';
import { retentionChart } from '../src/service/charts/retention.js';
import { segmentationChart } from '../src/service/charts/segmentation.js';
import { sentimentChart } from '../src/service/charts/sentiment.js';
import { sessionChart } from '../src/service/charts/session-chart.js';
import { userCompositionChart } from '../src/service/charts/user-composition.js';
import { type Database, openDatabase } from '../src/service/store/database.js';
import {
  type ChartControlsByKind,
  type ChartKind,
  parseChartControls,
  type RetentionControls,
  type SegmentationControls,
  type SessionControls,
  type UserCompositionControls,
} from '../src/shared/chart-controls.js';
import { ANALYSIS_CASES, ANALYSIS_TARGET, type AnalysisCase, generateSummaries } from './charts-analysis.js';

/**
 * `npm run bench -- charts [--sizes=1000000,10000000] [--runs=5] [--only=spec|analysis]`: each chart's median latency over
 * generated data (90 days, 100 events per user), next to a bare date_trunc count + count-distinct
 * query over the same rows, the yardstick the targets are stated against. Rounds interleave the
 * yardstick and the charts so load from other processes affects both alike.
 */

const PROJECT = 'bench';
const RANGE = { start: '2025-01-01', end: '2025-04-01', period: 'day', tz: 'America/New_York' } as const;
const BASE = `TIMESTAMPTZ '2025-01-01 05:00:00+00'`;
/** Session starts spread over the 90 days, leaving an hour for the session's own events. */
const SPAN_US = 90 * 86_400_000_000 - 3_600_000_000;

/**
 * 10 events per session, 10 sessions per user; every 20th user is an anonymous user merged into its
 * neighbour, so charts resolve persons as they would after imports with identify. Pure SQL over
 * range(): 10M events take well under a minute and a few GB.
 */
export async function generate(db: Database, events: number): Promise<void> {
  const users = Math.max(1, Math.floor(events / 100));
  const sessions = Math.max(1, Math.floor(events / 10));
  const start = (s: string) => `${BASE} + to_microseconds((hash(${s}) % ${SPAN_US})::BIGINT)`;
  const owner = (s: string) => `'u' || (hash(${s} * 7 + 3) % ${users})`;
  const w = db.writer;
  await w.run(`INSERT INTO users SELECT '${PROJECT}', 'u' || i, 'u' || CASE WHEN i % 20 = 19 THEN i - 1 ELSE i END,
    'id' || i, i % 20 = 19, json_object('plan', ['free', 'pro', 'team'][1 + i % 3], 'country', 'c' || (i % 20),
    'beta', i % 7 = 0, 'age', 18 + i % 60), ${BASE}, NULL, NULL FROM range(${users}) t(i)`);
  await w.run(`INSERT INTO sessions SELECT '${PROJECT}', 's' || s, ${owner('s')}, NULL, ${start('s')},
    CASE WHEN s % 5 = 0 THEN NULL ELSE ${start('s')} + INTERVAL 300 SECOND END,
    ${start('s')} + INTERVAL 270 SECOND, NULL, NULL, NULL FROM range(${sessions}) t(s)`);
  await w.run(`INSERT INTO conversations SELECT '${PROJECT}', 's' || (i // 2) || '/' || (i % 2), 's' || (i // 2),
    ${start('i // 2')}, NULL, NULL FROM range(${sessions * 2}) t(i) WHERE i % 4 <> 3`);
  await w.run(`INSERT INTO events SELECT '${PROJECT}', 'e' || i,
    ['Session Started', 'Conversation Started', 'Conversation Turn', 'Conversation Turn', 'Conversation Turn',
     'Intent Informed', 'Conversation Usage', 'Conversation Function', 'Page Viewed', 'Conversation Turn'][1 + i % 10],
    'track', ${start('i // 10')} + to_seconds((i % 10) * 30), ${owner('i // 10')}, 's' || (i // 10),
    's' || (i // 10) || '/0',
    CASE WHEN i % 10 = 5
      THEN json_object('intent', ['billing', 'refund', 'greeting', 'bug'][1 + (hash(i) % 4)::BIGINT], 'confidence', (hash(i) % 100) / 100)
      ELSE json_object('model', ['gpt-4o', 'claude', 'llama'][1 + (hash(i) % 3)::BIGINT], 'tokens', hash(i) % 2000,
        'page', '/p/' || (hash(i) % 50)) END,
    NULL, ${start('i // 10')}, NULL FROM range(${events}) t(i)`);
  await generateSummaries(db, PROJECT, sessions, start, owner);
  await w.run('CHECKPOINT');
}

type Case = { name: string; kind: ChartKind; controls: unknown; target: number };

const CASES: Case[] = [
  {
    name: 'segmentation',
    kind: 'segmentation',
    target: 2,
    controls: { range: RANGE, eventFilters: [{ event_name: 'Conversation Turn' }] },
  },
  {
    name: 'segmentation (Any Event)',
    kind: 'segmentation',
    target: 2,
    controls: { range: RANGE, eventFilters: [{ event_name: 'Any Event' }] },
  },
  {
    name: 'segmentation (filter + group)',
    kind: 'segmentation',
    target: Number.NaN,
    controls: {
      range: RANGE,
      eventFilters: [
        {
          event_name: 'Conversation Turn',
          with: [{ property_name: 'plan', operator: 'in', values: ['pro', 'team'] }],
          groupBy: { property_name: 'model', property_values: [] },
        },
      ],
    },
  },
  { name: 'session', kind: 'session', target: 2, controls: { range: RANGE } },
  {
    name: 'retention',
    kind: 'retention',
    target: 3,
    controls: {
      range: RANGE,
      startingEvent: { event_name: 'Session Started' },
      returnEvents: [{ event_name: 'Conversation Turn' }],
    },
  },
  {
    name: 'user composition',
    kind: 'user-composition',
    target: 3,
    controls: { range: RANGE, selectedTrait: { trait_name: 'plan' } },
  },
];

const YARDSTICK = `SELECT date_trunc('day', ts AT TIME ZONE $4) AS bin, count(*) AS events, count(DISTINCT user_id) AS users
  FROM events WHERE project_id = $1 AND ts >= $2::TIMESTAMPTZ AND ts < $3::TIMESTAMPTZ GROUP BY bin`;

async function runCase(db: Database, c: Case): Promise<void> {
  const parsed = parseChartControls(c.kind, c.controls);
  if (!parsed.ok) throw new Error(`${c.name}: ${JSON.stringify(parsed.issues)}`);
  const ctx = makeContext(db.read, PROJECT, parsed.value.range, {}, 1000);
  // The response is built and schema-validated as the route does; only HTTP itself is left out.
  // Each cast restates what `c.kind` already chose for parseChartControls.
  const v = parsed.value;
  if (c.kind === 'segmentation') await segmentationChart(ctx, v as SegmentationControls);
  else if (c.kind === 'retention') await retentionChart(ctx, v as RetentionControls);
  else if (c.kind === 'session') await sessionChart(ctx, v as SessionControls);
  else await userCompositionChart(ctx, v as UserCompositionControls);
}

function row(label: string, ms: string, ratio: string, target: string, verdict = ''): string {
  return `${label.padEnd(40)}${ms.padStart(10)}${ratio.padStart(8)}${target.padStart(8)}${verdict.padStart(7)}`;
}

/** One analysis chart, as the route builds it (schema-validated response), HTTP left out. */
function runAnalysis(db: Database, c: AnalysisCase): Promise<unknown> {
  const parsed = parseChartControls(c.kind, c.controls(RANGE));
  if (!parsed.ok) throw new Error(`${c.name}: ${JSON.stringify(parsed.issues)}`);
  const ctx: ChartContext = makeContext(db.read, PROJECT, parsed.value.range, {}, 1000);
  const v = parsed.value;
  switch (c.kind) {
    case 'funnel':
      return funnelChart(ctx, v as ChartControlsByKind['funnel']);
    case 'intent-distribution':
      return intentDistributionChart(ctx, v as ChartControlsByKind['intent-distribution']);
    case 'sentiment-analysis':
      return sentimentChart(ctx, v as ChartControlsByKind['sentiment-analysis']);
    case 'conversation-analysis':
      return conversationAnalysisChart(ctx, v as ChartControlsByKind['conversation-analysis']);
    default:
      return intentAnalysisChart(ctx, v as ChartControlsByKind['intent-analysis']);
  }
}

/**
 * The issue-18 rows: each chart against its own yardstick query (charts-analysis.ts), medians of
 * interleaved runs, OK when within the target, SHORT otherwise; a chart whose answer differs from
 * its yardstick's says so, since its ratio would then compare different work.
 */
async function benchAnalysis(db: Database, params: unknown[], runs: number): Promise<void> {
  console.log(row('issue-18 chart [its own yardstick]', 'median ms', 'ratio', 'target', 'verdict'));
  for (const c of ANALYSIS_CASES) {
    // DuckDB refuses more values than a statement has placeholders.
    const used = Math.max(...[...c.yardstick.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const bare = () => db.read.all(c.yardstick, params.slice(0, used) as never);
    const chart = () => runAnalysis(db, c);
    const same = c.answer(await bare()) === c.answer(await chart());
    const yard: number[] = [];
    const mine: number[] = [];
    for (let r = 0; r < runs; r++) {
      yard.push(await time(bare));
      mine.push(await time(chart));
    }
    const ratio = median(mine) / median(yard);
    const verdict = !same ? 'DIFFERS' : ratio <= ANALYSIS_TARGET ? 'OK' : 'SHORT';
    console.log(
      row(
        `${c.name} [${median(yard).toFixed(0)} ms]`,
        median(mine).toFixed(0),
        ratio.toFixed(2),
        `<=${ANALYSIS_TARGET}x`,
        verdict,
      ),
    );
  }
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `--only=analysis` runs just the issue-18 rows (after generating), `--only=spec` just the others. */
let only: string | undefined;

async function benchSize(events: number, runs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cas-bench-charts-'));
  try {
    const db = await openDatabase(join(dir, 'bench.duckdb'));
    const genMs = await time(() => generate(db, events));
    const rss = (process.memoryUsage().rss / 2 ** 30).toFixed(1);
    const sizes = `${events.toLocaleString('en-US')} events, ${(events / 100).toLocaleString('en-US')} users`;
    console.log(`\n${sizes}: generated in ${(genMs / 1000).toFixed(1)} s, process RSS ${rss} GiB`);
    const params = [PROJECT, '2025-01-01T05:00:00.000Z', '2025-04-01T04:00:00.000Z', RANGE.tz];
    const yard: number[] = [];
    const samples = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
    // One warm-up round, not measured: first reads fault the file into the page cache.
    await db.read.all(YARDSTICK, params);
    const cases = only === 'analysis' ? [] : CASES;
    for (const c of cases) await runCase(db, c);
    for (let r = 0; r < runs && cases.length > 0; r++) {
      yard.push(await time(() => db.read.all(YARDSTICK, params)));
      for (const c of cases) samples.get(c.name)!.push(await time(() => runCase(db, c)));
    }
    const y = median(yard);
    if (cases.length > 0) {
      console.log(row('query', 'median ms', 'ratio', 'target'));
      console.log(row('yardstick (date_trunc count+distinct)', y.toFixed(0), '1.00', ''));
    }
    for (const c of cases) {
      const m = median(samples.get(c.name)!);
      const target = Number.isNaN(c.target) ? '-' : `<=${c.target}x`;
      console.log(row(c.name, m.toFixed(0), (m / y).toFixed(2), target));
    }
    if (only !== 'spec') await benchAnalysis(db, params, runs);
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const sizes = (flag('sizes') ?? '1000000,10000000').split(',').map(Number);
  const runs = Number(flag('runs') ?? 5);
  only = flag('only');
  for (const size of sizes) await benchSize(size, runs);
}
