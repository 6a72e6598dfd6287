import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { childRun } from './child-run.js';

/**
 * mixpanel-import, the yardstick of the importer alone (issue 16): installed for the bench only, into
 * a cache folder inside node_modules (never a dependency of the package, never committed), and run
 * as its own process against the same local sink, with the settings the issue names: 10 workers,
 * batches of 2,000, transport `got`, no compression, and a `highWater` that lets its JSONL reader read
 * the file in 16 KB pieces instead of 100 bytes (mixpanel-run.cjs says why). Each turn becomes one
 * Mixpanel event, mapped by a transformFunc (bench/mixpanel-run.cjs, which also holds the one shim:
 * the job URL).
 */
const VERSION = '3.1.43';
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/cas-bench/mixpanel-import', import.meta.url));
const RUNNER = fileURLToPath(new URL('../../bench/mixpanel-run.cjs', import.meta.url));

export interface MixpanelRun {
  records: number;
  /**
   * From its process's start to its exit, as `cas import` is timed (bench/cas-runs.ts): the same
   * job, measured the same way, its start and module loading included.
   */
  seconds: number;
  /** Its own timer, around the import call only (0.6-0.9 s less at 300k turns, by hand). */
  ownSeconds: number;
  cpu: number;
  peakRssMb: number;
}

/** The module folder, installing it first if needed; undefined (with the reason) when it cannot be. */
export async function ensureMixpanelImport(): Promise<{ dir?: string; problem?: string }> {
  const dir = join(CACHE, 'node_modules', 'mixpanel-import');
  const pkg = join(dir, 'package.json');
  if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version === VERSION)
    return { dir };
  mkdirSync(CACHE, { recursive: true });
  try {
    await promisify(execFile)(
      'npm',
      ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', CACHE, `mixpanel-import@${VERSION}`],
      { timeout: 300_000 },
    );
    return { dir };
  } catch (error) {
    return {
      problem: `npm install mixpanel-import@${VERSION} failed: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}

/** One run against `sinkUrl` (`dry`: its dry run, which maps and batches but sends nothing). */
export async function runMixpanelImport(
  dir: string,
  file: string,
  sinkUrl: string,
  mode: 'send' | 'dry',
): Promise<MixpanelRun> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, [RUNNER, dir, file, sinkUrl, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { code, stdout: out, stderr: err, peakRssMb } = await childRun(child);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (code !== 0) throw new Error(`mixpanel-import exited ${code}: ${err.slice(-1000)}`);
  const line = out.trim().split('\n').pop() ?? '{}';
  const r = JSON.parse(line) as { records: number; seconds: number; cpu: number };
  return { records: r.records, seconds, ownSeconds: r.seconds, cpu: r.cpu, peakRssMb };
}
