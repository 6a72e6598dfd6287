import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService } from '../src/service/service.js';
import { bareAppenderRate, baselineRows } from './ingest-baseline.js';
import type { PosterConfig, PosterReport } from './ingest-poster.js';
import { laneProject } from './ingest-workload.js';
import { printTable } from './report.js';

/**
 * `npm run bench -- ingest [--events=1000000] [--batch=1000] [--lanes=4] [--projects=1] [--keep] [--no-baseline]`
 *
 * Posts the workload of ingest-workload.ts to POST /bc/v1/events/queue from a separate process and
 * prints events/s, then, in the same run, the rate of a bare DuckDB appender inserting the same events
 * as rows of an events-shaped table: value by value with a single commit and committing every batch,
 * then fed data chunks (the service's own way in) committing every batch. Target (issue 16): the queue
 * reaches at least 0.4 of the fastest of the three bare rates.
 */
function flag(args: readonly string[], name: string, fallback: number): number {
  const raw = args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const value = raw === undefined ? fallback : Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function postFromChild(config: PosterConfig): Promise<PosterReport> {
  const child = fork(
    fileURLToPath(new URL('./ingest-poster.js', import.meta.url)),
    [JSON.stringify(config)],
    {
      stdio: 'inherit',
    },
  );
  return new Promise<PosterReport>((resolve, reject) => {
    child.on('message', (message: { ready?: boolean; report?: PosterReport }) => {
      if (message.ready) child.send('go');
      if (message.report) resolve(message.report);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`poster exited with ${code}`));
    });
  });
}

export async function run(args: string[]): Promise<void> {
  const events = flag(args, 'events', 1_000_000);
  const batch = flag(args, 'batch', 1000);
  const lanes = flag(args, 'lanes', 4);
  const open = flag(args, 'open', 1);
  // Tenants: lanes spread over this many projects of one organization (a hosted service's traffic).
  const projects = flag(args, 'projects', 1);
  const eventsPerLane = Math.ceil(events / lanes);
  const dir = mkdtempSync(join(tmpdir(), 'cas-bench-ingest-'));
  console.log(
    `${fmt(eventsPerLane * lanes)} events, batches of ${batch}, ${lanes} lanes in order each, ${open} open session(s) per lane, ${projects} project(s); data in ${dir}`,
  );
  try {
    const service = await startService({
      dataDir: join(dir, 'data'),
      port: 0,
      provision: { apiKey: 'bench-key', projectId: 'bench' },
      // The rate limiter is measured elsewhere; here it must not pace the client.
      limits: { ingestRatePerSecond: 1_000_000, ingestBurst: 1_000_000 },
    });
    const config = {
      url: service.url,
      apiKey: 'bench-key',
      projectId: 'bench',
      lanes,
      eventsPerLane,
      batch,
      open,
      projects,
    };
    for (let lane = 0; lane < Math.min(lanes, projects); lane++)
      await service.tenants.provision({ apiKey: 'bench-key', projectId: laneProject(config, lane) });
    let report: PosterReport;
    let stored: number;
    try {
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      report = await postFromChild(config);
      const row = await service.db.read.one<{ n: bigint }>(
        "SELECT count(*) AS n FROM events WHERE project_id LIKE 'bench%'",
      );
      stored = Number(row?.n ?? 0);
      const cpu = process.cpuUsage(cpu0);
      const wall = performance.now() - wall0;
      console.log(`service: ${service.ingestStats.summary()}`);
      console.log(
        `service process CPU: ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(0)}% of one core (user ${((cpu.user / 1000 / wall) * 100).toFixed(0)}%, system ${((cpu.system / 1000 / wall) * 100).toFixed(0)}%), poster CPU ${report.cpuPercent?.toFixed(0)}%`,
      );
    } finally {
      await service.close();
    }
    if (report.failures.length > 0)
      console.log(`FAILED requests, first ones:\n  ${report.failures.join('\n  ')}`);
    const queueRate = report.accepted / report.seconds;
    console.log(
      `queue:        ${fmt(queueRate)} events/s  (${fmt(report.accepted)} accepted, ${report.duplicates} duplicates, ` +
        `${fmt(stored)} rows stored incl. generated, ${report.seconds.toFixed(1)} s, batch p50 ${report.p50.toFixed(1)} ms, p99 ${report.p99.toFixed(1)} ms)`,
    );
    if (args.includes('--no-baseline')) return;
    const rows = baselineRows(lanes, eventsPerLane, open);
    const once = await bareAppenderRate(dir, rows, Number.POSITIVE_INFINITY);
    console.log(`bare appender, one commit:          ${fmt(once)} rows/s`);
    const perBatch = await bareAppenderRate(dir, rows, batch);
    console.log(`bare appender, commit every ${batch}: ${fmt(perBatch)} rows/s`);
    // The same appender fed whole data chunks, as the service feeds it: the fastest bare insert.
    const chunks = await bareAppenderRate(dir, rows, batch, 'chunks');
    console.log(`bare appender, data chunks, commit every ${batch}: ${fmt(chunks)} rows/s`);
    // The yardstick is the fastest of the three ways a bare appender stores the same rows.
    const bare = Math.max(once, perBatch, chunks);
    printTable('ingest (issue 16)', [
      {
        figure: `queue ingest (${batch}-event batches, another process) / bare appender`,
        value: queueRate / bare,
        target: 0.4,
        detail: `${fmt(queueRate)} events/s vs ${fmt(bare)} rows/s`,
      },
    ]);
  } finally {
    if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}
