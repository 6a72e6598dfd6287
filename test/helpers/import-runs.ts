import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CAS_BIN, type CliResult, cleanEnv, runCli } from './cli.js';
import { spawnTracked } from './processes.js';

/** Anything of this on stderr is a crash, whatever the exit code. */
export const CRASH = /internal error|Napi|terminate called|this is a bug|at .+\(.+:\d+:\d+\)/i;

/** `cas import <files> --data-dir <dir> --json`, the real CLI on its embedded service. */
export function importRun(
  files: string[],
  dataDir: string,
  extra: string[] = [],
  timeoutMs = 120_000,
): Promise<CliResult> {
  return runCli(['import', ...files, '--data-dir', dataDir, '--json', ...extra], { timeoutMs });
}

/** The `--json` summary of an import (printed on stdout). */
export function summaryOf(run: CliResult): Record<string, unknown> {
  try {
    return JSON.parse(run.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(
      `no JSON summary (exit ${run.code}): ${run.stdout.slice(0, 500)} ${run.stderr.slice(0, 1000)}`,
    );
  }
}

/** The process holds `<dataDir>/cas.duckdb` open: its embedded service has started. */
export function holdsDatabase(pid: number, dataDir: string): boolean {
  const target = join(dataDir, 'cas.duckdb');
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === target;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * Starts an import and SIGKILLs it `afterMs` after its embedded service opened the database (a
 * point of its own progress, not of the clock). Resolves with whether the kill landed (the run had
 * not finished on its own) and what the run printed.
 */
export async function importKilled(
  files: string[],
  dataDir: string,
  afterMs: number,
  extra: string[] = [],
): Promise<{ killed: boolean; stderr: string }> {
  const child = spawnTracked(
    process.execPath,
    [CAS_BIN, 'import', ...files, '--data-dir', dataDir, '--json', ...extra],
    { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout?.resume();
  const ended = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let done = false;
  void ended.then(() => (done = true));
  try {
    const deadline = Date.now() + 60_000;
    while (!done && !holdsDatabase(child.pid ?? 0, dataDir)) {
      if (Date.now() > deadline) throw new Error(`the import never opened its database: ${stderr}`);
      await sleep(5);
    }
    if (afterMs > 0) await sleep(afterMs);
    const killed = !done && child.kill('SIGKILL');
    await ended;
    return { killed, stderr };
  } finally {
    child.kill('SIGKILL');
  }
}

export type JsonRecord = Record<string, unknown>;

export function writeJsonl(path: string, records: readonly JsonRecord[]): string {
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}

const csvCell = (v: unknown): string => {
  if (v === undefined || v === null) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

/** Records as CSV with the union of their keys as the header (absent values are empty cells). */
export function writeCsv(path: string, records: readonly JsonRecord[], header?: readonly string[]): string {
  const columns = header ?? [...new Set(records.flatMap((r) => Object.keys(r)))];
  const lines = [columns.join(','), ...records.map((r) => columns.map((c) => csvCell(r[c])).join(','))];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** A small seeded PRNG (mulberry32): shuffles and splits that a failing case's seed reproduces. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(items: readonly T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Records sorted by their timestamp (stable: records of the same instant keep their order). */
export function byTime(records: readonly JsonRecord[]): JsonRecord[] {
  return [...records].sort((a, b) => Date.parse(String(a.timestamp)) - Date.parse(String(b.timestamp)));
}

/** The columns of the turn CSVs the import-order tests write. */
export const TURN_HEADER = [
  'kind',
  'timestamp',
  'session_id',
  'user_id',
  'user',
  'assistant',
  'model',
  'prompt_tokens',
  'completion_tokens',
];
