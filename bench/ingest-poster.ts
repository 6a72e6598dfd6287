import { Agent, request } from 'undici';
import { laneBodies, laneProject } from './ingest-workload.js';

/**
 * The benchmark's client, in its own process (as the hosted clients are): builds every request body
 * first, waits for "go", then posts each lane's batches in order, lanes concurrently, and reports.
 */
export interface PosterConfig {
  url: string;
  apiKey: string;
  projectId: string;
  lanes: number;
  eventsPerLane: number;
  batch: number;
  /** Sessions each lane keeps open at once, their events interleaved. */
  open: number;
  /** Lane n posts to `${projectId}-${n % projects}` when over 1 (tenants spread over projects). */
  projects?: number;
}

export interface PosterReport {
  seconds: number;
  requests: number;
  accepted: number;
  duplicates: number;
  failures: string[];
  /** Latency percentiles of one batch, in ms. */
  p50: number;
  p99: number;
  /** The poster's own CPU use while posting, percent of one core. */
  cpuPercent?: number;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as PosterConfig;
  const lanes = Array.from({ length: config.lanes }, (_, lane) =>
    laneBodies(lane, config.eventsPerLane, config.batch, config.open),
  );
  const agent = new Agent({ connections: config.lanes, keepAliveTimeout: 60_000 });
  const headersOf = (lane: number) => ({
    authorization: `Bearer ${config.apiKey}`,
    'x-app-id': laneProject(config, lane),
    'content-type': 'application/json',
  });
  await new Promise<void>((resolve) => {
    process.once('message', () => resolve());
    process.send?.({ ready: true });
  });
  const report: PosterReport = {
    seconds: 0,
    requests: 0,
    accepted: 0,
    duplicates: 0,
    failures: [],
    p50: 0,
    p99: 0,
  };
  const latencies: number[] = [];
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    lanes.map(async (bodies, lane) => {
      const headers = headersOf(lane);
      for (const body of bodies) {
        const t = performance.now();
        const res = await request(`${config.url}/bc/v1/events/queue`, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
        });
        const text = await res.body.text();
        latencies.push(performance.now() - t);
        report.requests++;
        if (res.statusCode !== 200) {
          if (report.failures.length < 5) report.failures.push(`${res.statusCode} ${text.slice(0, 300)}`);
          continue;
        }
        const answer = JSON.parse(text) as { accepted: number; duplicates: number };
        report.accepted += answer.accepted;
        report.duplicates += answer.duplicates;
      }
    }),
  );
  report.seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  report.cpuPercent = ((cpu.user + cpu.system) / 1000 / (report.seconds * 1000)) * 100;
  latencies.sort((a, b) => a - b);
  report.p50 = latencies[Math.floor(latencies.length * 0.5)] ?? 0;
  report.p99 = latencies[Math.floor(latencies.length * 0.99)] ?? 0;
  await agent.close();
  process.send?.({ report });
}

await main();
