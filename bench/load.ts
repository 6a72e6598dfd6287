import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientError } from '../src/client/errors.js';
import { createClient } from '../src/client/http-client.js';
import { type ChartKind, eventCounts, getChart, liveEvents, postQueue } from '../src/client/routes.js';

/**
 * `npm run bench -- load [--seconds=60] [--writers=8] [--readers=4] [--batch=200] [--attack-seconds=30]
 * [--attackers=4]`
 *
 * `cas serve` in its own process; for the given time, writers post batches to the queue and readers
 * ask the four charts, all through the shared client (so 429s are waited out as users' clients do).
 * Then the expensive-chart phase (issue 15): the loaded tenant sends the costly charts of the issue
 * (EXPENSIVE) from `attackers` clients at once while
 * writers go on and another tenant keeps asking its own small reads, whose p99 must stay under 1 s.
 * Prints throughput, p50/p99 latency, errors and retries, then checks that the stored count equals
 * what the service acknowledged (issue 7: zero errors, zero lost events).
 */
function flag(args: readonly string[], name: string, fallback: number): number {
  const raw = args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  return raw === undefined ? fallback : Number(raw);
}

const pct = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

interface Stats {
  latencies: number[];
  errors: number;
  retries: number;
}

async function startServe(dataDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const main = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const child = spawn(
    process.execPath,
    [
      main,
      'serve',
      '--port',
      '0',
      '--json',
      '--data-dir',
      dataDir,
      '--api-key',
      'load-key',
      '--project',
      'load',
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) =>
      resolve((JSON.parse(chunk.toString()) as { url: string }).url),
    );
    child.once('exit', (code) => reject(new Error(`cas serve exited ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const CHARTS: ReadonlyArray<[ChartKind, Record<string, unknown>]> = [
  ['segmentation', { eventFilters: [{ event_name: 'Load' }, { event_name: 'Any Event' }] }],
  ['retention', { startingEvent: { event_name: 'Load' } }],
  ['session', {}],
  ['user-composition', { selectedTrait: { trait_name: 'plan' } }],
];

export async function run(args: string[]): Promise<void> {
  const seconds = flag(args, 'seconds', 60);
  const attackSeconds = flag(args, 'attack-seconds', 30);
  const attackers = flag(args, 'attackers', 4);
  const writers = flag(args, 'writers', 8);
  const readers = flag(args, 'readers', 4);
  const batch = flag(args, 'batch', 200);
  const dataDir = mkdtempSync(join(tmpdir(), 'cas-bench-load-'));
  const service = await startServe(dataDir);
  const write: Stats = { latencies: [], errors: 0, retries: 0 };
  const read: Stats = { latencies: [], errors: 0, retries: 0 };
  const client = (stats: Stats) =>
    createClient({
      endpoint: service.url,
      apiKey: 'load-key',
      projectId: 'load',
      onRetry: () => void stats.retries++,
    });
  const now = Date.now();
  const range = {
    start: new Date(now - 7 * 86_400_000).toISOString(),
    end: new Date(now + 86_400_000).toISOString(),
    period: 'day',
    tz: 'UTC',
  };
  const deadline = performance.now() + seconds * 1000;
  let acknowledged = 0;

  const writer = async (w: number, until = deadline, phase = '') => {
    const c = client(write);
    for (let n = 0; performance.now() < until; n++) {
      const events = Array.from({ length: batch }, (_, i) => ({
        type: 'track',
        event: 'Load',
        session_id: `${phase}w${w}-s${n}`,
        user_id: `user-${(w * 7919 + n) % 5_000}`,
        event_id: `load-${phase}${w}-${n}-${i}`,
        timestamp: new Date(now - 3 * 86_400_000 + n * 1000 + i).toISOString(),
        properties: { writer: w, i },
      }));
      const started = performance.now();
      try {
        const ack = await postQueue(c, events);
        acknowledged += ack.accepted ?? 0;
        write.latencies.push(performance.now() - started);
      } catch {
        write.errors++;
      }
    }
    await c.close();
  };
  const reader = async (r: number) => {
    const c = client(read);
    for (let n = r; performance.now() < deadline; n++) {
      const [kind, controls] = CHARTS[n % CHARTS.length]!;
      const started = performance.now();
      try {
        await getChart(c, kind, { range, ...controls });
        read.latencies.push(performance.now() - started);
      } catch {
        read.errors++;
      }
    }
    await c.close();
  };

  console.log(
    `${seconds} s, ${writers} writers (batches of ${batch}), ${readers} chart readers; cas serve in its own process`,
  );
  await Promise.all([
    ...Array.from({ length: writers }, (_, w) => writer(w)),
    ...Array.from({ length: readers }, (_, r) => reader(r)),
  ]);

  const attack = await expensivePhase(service.url, dataDir, attackSeconds, attackers, range, (until) =>
    Promise.all(Array.from({ length: writers }, (_, w) => writer(w, until, 'x'))),
  );

  const checker = client({ latencies: [], errors: 0, retries: 0 });
  const [stored] = await eventCounts(
    checker,
    [{ start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z' }],
    { event_name: 'Load' },
  );
  await checker.close();
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });

  for (const [name, s, unit] of [
    ['writes', write, batch],
    ['reads ', read, 1],
  ] as const) {
    const sorted = [...s.latencies].sort((a, b) => a - b);
    const rate = (sorted.length * unit) / seconds;
    console.log(
      `${name}: ${fmt(sorted.length)} requests (${fmt(rate)} ${unit > 1 ? 'events' : 'charts'}/s), p50 ${pct(sorted, 0.5).toFixed(1)} ms, p99 ${pct(sorted, 0.99).toFixed(1)} ms, errors ${s.errors}, retries ${s.retries}`,
    );
  }
  const lost = acknowledged - (stored ?? 0);
  console.log(
    `acknowledged ${fmt(acknowledged)} events, stored ${fmt(stored ?? 0)}: ${lost === 0 ? 'none lost, none extra' : `MISMATCH ${lost}`}`,
  );
  console.log(attack.report);
  if (lost !== 0 || write.errors + read.errors > 0 || !attack.ok) process.exitCode = 1;
}

/**
 * The costly charts of issue 15 over the loaded tenant's events (`i` runs 0..batch-1): the filter
 * `in [0..100]`, a group-by of 2,000 listed values, and 300 identical filters.
 */
const EXPENSIVE: ReadonlyArray<Record<string, unknown>> = [
  {
    eventFilters: [
      {
        event_name: 'Load',
        with: [{ property_name: 'i', operator: 'in', values: Array.from({ length: 101 }, (_, i) => i) }],
      },
    ],
  },
  {
    eventFilters: [
      {
        event_name: 'Load',
        groupBy: { property_name: 'i', property_values: Array.from({ length: 2000 }, (_, i) => i) },
      },
    ],
  },
  // 300 series: 300 scans of the tenant's events, longer than the query budget.
  { eventFilters: Array(300).fill({ event_name: 'Load' }) },
];

/**
 * `attackers` clients of the loaded tenant send the expensive charts back to back while writers go
 * on and one client of another tenant (the data directory's own key) asks small reads of its project.
 */
async function expensivePhase(
  url: string,
  dataDir: string,
  seconds: number,
  attackers: number,
  range: Record<string, string>,
  writers: (until: number) => Promise<unknown>,
): Promise<{ report: string; ok: boolean }> {
  const other = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as {
    api_key: string;
    project_id: string;
  };
  const victim = createClient({ endpoint: url, apiKey: other.api_key, projectId: other.project_id });
  const now = Date.now();
  await postQueue(
    victim,
    Array.from({ length: 50 }, (_, i) => ({
      type: 'track',
      event: `Other ${i % 5}`,
      session_id: 'other-s',
      user_id: 'other-u',
      timestamp: new Date(now - 86_400_000 + i * 1000).toISOString(),
    })),
  );
  const until = performance.now() + seconds * 1000;
  const outcomes = new Map<string, number>();
  const expensive: number[] = [];
  const attacker = async (a: number) => {
    const c = createClient({ endpoint: url, apiKey: 'load-key', projectId: 'load', retries: 1 });
    for (let n = a; performance.now() < until; n++) {
      const started = performance.now();
      let outcome = '200';
      try {
        await getChart(c, 'segmentation', { range, ...EXPENSIVE[n % EXPENSIVE.length] });
      } catch (error) {
        outcome = error instanceof ClientError ? String(error.status) : 'error';
      }
      expensive.push(performance.now() - started);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    await c.close();
  };
  const reads: number[] = [];
  let failed = 0;
  const day = { start: new Date(now - 2 * 86_400_000).toISOString(), end: new Date(now).toISOString() };
  const SMALL: ReadonlyArray<() => Promise<unknown>> = [
    () => victim.request({ method: 'GET', path: '/bc/v1/agg/event-names' }),
    () => eventCounts(victim, [day]),
    () => liveEvents(victim, { ...day, limit: 20 }),
    () => getChart(victim, 'segmentation', { range, eventFilters: [{ event_name: 'Other 1' }] }),
  ];
  const reader = async () => {
    for (let n = 0; performance.now() < until; n++) {
      const started = performance.now();
      try {
        await SMALL[n % SMALL.length]!();
        reads.push(performance.now() - started);
      } catch {
        failed++;
      }
    }
  };
  await Promise.all([writers(until), reader(), ...Array.from({ length: attackers }, (_, a) => attacker(a))]);
  await victim.close();
  const sorted = [...reads].sort((a, b) => a - b);
  const slow = [...expensive].sort((a, b) => a - b);
  const p99 = pct(sorted, 0.99);
  const ok = failed === 0 && p99 < 1000;
  const statuses = [...outcomes.entries()].map(([status, n]) => `${status} x${n}`).join(', ');
  return {
    ok,
    report: [
      `expensive-chart phase, ${seconds} s: ${attackers} clients of one tenant sent ${expensive.length} expensive charts (${statuses}; p50 ${pct(slow, 0.5).toFixed(0)} ms, max ${(slow.at(-1) ?? 0).toFixed(0)} ms)`,
      `  another tenant's reads: ${fmt(sorted.length)} requests, p50 ${pct(sorted, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms, errors ${failed}: ${ok ? 'p99 under 1 s' : 'FAILED: p99 must stay under 1 s'}`,
    ].join('\n'),
  };
}
