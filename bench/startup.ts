import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { applyV8Flags } from '../src/shared/v8-flags.js';

/**
 * `npm run bench -- startup [--runs=20]`: median wall time of `cas --version` and `cas --help`
 * against `node -e 0` (issue 8: at most 3x), and of the single executable when it has been built;
 * then of `cas users list` on an empty store (a command that starts the embedded service). Each CLI
 * figure for bin/cas.js (the build's bundle with its code cache: what users run) and for the same
 * modules one by one (dist/cli/main.js). Then the embedded service's thread (what a big import
 * starts), started until ready and closed over one data directory: its one-file bundle through its
 * loader with the build's code cache, the same without the cache, and its unbundled entry.
 */
function median(command: string, args: string[], runs: number, env?: NodeJS.ProcessEnv): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync(command, args, { stdio: 'ignore', ...(env ? { env } : {}) });
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
  const loader = dir('embedded-loader.js');
  if (!existsSync(dir('embedded-worker.bundle.cjs'))) {
    console.log('embedded service thread: no bundle (npm run build)');
    return;
  }
  // As the CLI runs it: under the CLI's V8 flags, without which V8 refuses the build's code cache.
  applyV8Flags();
  // The same bundle and loader without the cache beside them (a sibling of dist/service, so the
  // loader's own imports and DuckDB still resolve).
  const bare = fileURLToPath(new URL('../../dist/bench-no-code-cache', import.meta.url));
  mkdirSync(bare, { recursive: true });
  for (const file of ['embedded-loader.js', 'embedded-worker.bundle.cjs'])
    copyFileSync(dir(file), join(bare, file));
  const data = mkdtempSync(join(tmpdir(), 'cas-bench-start-'));
  try {
    const times = { cached: [] as number[], bare: [] as number[], modules: [] as number[] };
    await serviceThread(loader, data); // creates the file and its tables: not what is measured
    for (let i = 0; i < runs; i++) {
      times.cached.push(await serviceThread(loader, data));
      times.bare.push(await serviceThread(join(bare, 'embedded-loader.js'), data));
      times.modules.push(await serviceThread(dir('embedded-worker.js'), data));
    }
    const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const [c, b, m] = [mid(times.cached), mid(times.bare), mid(times.modules)];
    console.log(
      `embedded service thread start+close (median of ${runs}): bundle with code cache ${c.toFixed(0)} ms, ` +
        `without ${b.toFixed(0)} ms, modules ${m.toFixed(0)} ms = ${(c / b).toFixed(2)}x without, ${(c / m).toFixed(2)}x modules`,
    );
  } finally {
    rmSync(data, { recursive: true, force: true });
    rmSync(bare, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 20);
  const bundled = fileURLToPath(new URL('../../bin/cas.js', import.meta.url));
  const modules = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
  const binary = fileURLToPath(
    new URL(`../../dist/cas-${process.platform}-${process.arch}`, import.meta.url),
  );
  const base = median(process.execPath, ['-e', '0'], runs);
  console.log(`node -e 0:            ${base.toFixed(1)} ms (median of ${runs})`);
  for (const flag of ['--version', '--help']) {
    const t = median(process.execPath, [bundled, flag], runs);
    const m = median(process.execPath, [modules, flag], runs);
    console.log(
      `cas ${flag.padEnd(10)}        ${t.toFixed(1)} ms = ${(t / base).toFixed(2)}x node -e 0 (target ≤ 3x); modules one by one ${m.toFixed(1)} ms`,
    );
  }
  const store = mkdtempSync(join(tmpdir(), 'cas-bench-users-'));
  try {
    // Nothing from this shell may point the CLI elsewhere.
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !/^(CAS_|MLSDK_|XDG_)/.test(key)),
    );
    Object.assign(env, { CAS_DATA_DIR: store, XDG_CONFIG_HOME: join(store, 'no-config') });
    spawnSync(process.execPath, [bundled, 'users', 'list'], { stdio: 'ignore', env }); // creates the store
    const users = Math.max(3, Math.round(runs / 4));
    const t = median(process.execPath, [bundled, 'users', 'list'], users, env);
    const m = median(process.execPath, [modules, 'users', 'list'], users, env);
    console.log(
      `cas users list (embedded service, median of ${users}): ${t.toFixed(0)} ms; modules one by one ${m.toFixed(0)} ms = ${(t / m).toFixed(2)}x`,
    );
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
  if (existsSync(binary)) {
    const t = median(binary, ['--help'], runs);
    console.log(`single executable --help: ${t.toFixed(1)} ms (target < 200 ms)`);
  } else {
    console.log('single executable: not built (npm run build:binary)');
  }
  await serviceThreads(Math.max(3, Math.round(runs / 4)));
}
