import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * `npm run bench -- startup [--runs=20]`: median wall time of `cas --version` and `cas --help`
 * against `node -e 0` (issue 8: at most 3x), and of the single executable when it has been built.
 * Then the embedded service's thread, started until ready and closed over one data directory, from
 * its one-file bundle (what commands run) against its unbundled entry (the same code as modules).
 */
function median(command: string, args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync(command, args, { stdio: 'ignore' });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

/** Start → ready → close of one embedded-service thread from `entry`, in ms. */
async function serviceThread(entry: string, dataDir: string): Promise<number> {
  const started = performance.now();
  const worker = new Worker(entry, { workerData: { dataDir, memoryLimit: '128MB' } });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: Record<string, unknown>) => {
        if ('ready' in m) worker.postMessage('close');
        else if ('closed' in m) resolve();
        else if ('failed' in m) reject(new Error(JSON.stringify(m.failed)));
      });
      worker.once('error', reject);
    });
    return performance.now() - started;
  } finally {
    await worker.terminate();
  }
}

async function serviceThreads(runs: number): Promise<void> {
  const dir = (name: string) => fileURLToPath(new URL(`../../dist/service/${name}`, import.meta.url));
  const bundle = dir('embedded-worker.bundle.js');
  if (!existsSync(bundle)) {
    console.log('embedded service thread: no bundle (npm run build)');
    return;
  }
  const data = mkdtempSync(join(tmpdir(), 'cas-bench-start-'));
  try {
    const times = { bundle: [] as number[], modules: [] as number[] };
    await serviceThread(bundle, data); // creates the file and its tables: not what is measured
    for (let i = 0; i < runs; i++) {
      times.bundle.push(await serviceThread(bundle, data));
      times.modules.push(await serviceThread(dir('embedded-worker.js'), data));
    }
    const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const [b, m] = [mid(times.bundle), mid(times.modules)];
    console.log(
      `embedded service thread start+close: bundle ${b.toFixed(0)} ms, modules ${m.toFixed(0)} ms = ${(b / m).toFixed(2)}x (median of ${runs})`,
    );
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 20);
  const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const binary = fileURLToPath(
    new URL(`../../dist/cas-${process.platform}-${process.arch}`, import.meta.url),
  );
  const base = median(process.execPath, ['-e', '0'], runs);
  console.log(`node -e 0:            ${base.toFixed(1)} ms (median of ${runs})`);
  for (const flag of ['--version', '--help']) {
    const t = median(process.execPath, [cli, flag], runs);
    console.log(
      `cas ${flag.padEnd(10)}        ${t.toFixed(1)} ms = ${(t / base).toFixed(2)}x node -e 0 (target ≤ 3x)`,
    );
  }
  if (existsSync(binary)) {
    const t = median(binary, ['--help'], runs);
    console.log(`single executable --help: ${t.toFixed(1)} ms (target < 200 ms)`);
  } else {
    console.log('single executable: not built (npm run build:binary)');
  }
  await serviceThreads(Math.max(3, Math.round(runs / 4)));
}
