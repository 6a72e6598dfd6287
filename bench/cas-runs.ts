import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { childRun } from './child-run.js';

/** The built CLI, as a user runs it. */
export const CAS_BIN = fileURLToPath(new URL('../../bin/cas.js', import.meta.url));

export interface ImportRun {
  seconds: number;
  peakRssMb: number;
  /**
   * The run's `--json` summary (a dry run's, from stderr), and for a dry run `printed`: the lines of
   * events it printed.
   */
  summary: Record<string, unknown>;
}

/**
 * The last JSON object `text` ends with, parsed: a summary printed whole (`--json` on stdout) or on
 * one line (a dry run's, on stderr); undefined when there is none.
 */
function lastObject(text: string): Record<string, unknown> | undefined {
  const rest = text.trimEnd();
  for (let at = rest.lastIndexOf('{'); at >= 0; at = rest.lastIndexOf('{', at - 1)) {
    if (at > 0 && rest[at - 1] !== '\n') continue;
    const end = rest.indexOf('\n', at);
    for (const candidate of [rest.slice(at), end === -1 ? '' : rest.slice(at, end)]) {
      try {
        return JSON.parse(candidate) as Record<string, unknown>;
      } catch {
        // Not the summary, or not all of it: look further.
      }
    }
  }
  return undefined;
}

/**
 * Runs the built CLI; peak RSS is the kernel's high-water mark (VmHWM), polled until exit. A dry run
 * prints every event (143 MB at 300k turns) into a file beside the data directory, as one saves them
 * (`> events.jsonl`), removed after: through a pipe into this process it waited on the pipe, 10-11 s
 * against 8.3-9.2 s into a file and 8.2-9.0 s into /dev/null (alternated by hand, 300k turns).
 */
export async function casImport(file: string, dataDir: string, extra: string[]): Promise<ImportRun> {
  const dry = extra.includes('--dry-run');
  const events = `${dataDir}-events.jsonl`;
  const out = dry ? openSync(events, 'w') : 'pipe';
  const start = process.hrtime.bigint();
  let run: Awaited<ReturnType<typeof childRun>>;
  try {
    const child = spawn(
      process.execPath,
      [CAS_BIN, 'import', file, '--kind', 'turn', '--json', '--data-dir', dataDir, ...extra],
      { stdio: ['ignore', out, 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    );
    run = await childRun(child);
  } finally {
    if (typeof out === 'number') closeSync(out);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  // Untimed: the lines the dry run printed, which `complete` compares with the events it counted.
  const printed = dry ? lineCount(events) : undefined;
  if (dry) rmSync(events, { force: true });
  const { code, stdout, stderr, peakRssMb } = run;
  if (code !== 0) throw new Error(`cas import exited ${code}: ${stderr.slice(-2000)}`);
  const summary = dry ? lastObject(stderr) : lastObject(stdout);
  if (summary === undefined) throw new Error(`cas import printed no summary: ${stderr.slice(-2000)}`);
  return { seconds, peakRssMb, summary: printed === undefined ? summary : { ...summary, printed } };
}

/** Lines of a file, read a megabyte at a time. */
function lineCount(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const bytes = Buffer.allocUnsafe(1 << 20);
    let lines = 0;
    for (let n = readSync(fd, bytes); n > 0; n = readSync(fd, bytes))
      for (let at = bytes.indexOf(10); at !== -1 && at < n; at = bytes.indexOf(10, at + 1)) lines++;
    return lines;
  } finally {
    closeSync(fd);
  }
}

/**
 * '' when the run took every one of `records` and stopped for nothing (a dry run: and printed every
 * event it counted); else what it said, flagged.
 */
export function complete(run: ImportRun, records: number): string {
  const s = run.summary;
  const printedAll = s.printed === undefined || s.printed === s.events;
  return Number(s.records) === records && Number(s.rejected) === 0 && s.stopped === false && printedAll
    ? ''
    : ` INCOMPLETE ${JSON.stringify(s)}`;
}

/** Seconds a `cas` command took from its start to its exit; throws when it fails. */
export async function casSeconds(args: readonly string[]): Promise<number> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, [CAS_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { code, stderr } = await childRun(child);
  if (code !== 0) throw new Error(`cas ${args[0]} exited ${code}: ${stderr.slice(-2000)}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** A separate `cas serve` on a free port; resolves once it says where it listens. */
export async function casServe(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      CAS_BIN,
      'serve',
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--api-key',
      'bench-key',
      '--project',
      'bench',
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  // With --json it prints one line once it listens: {"url", "api_key", "project_id", "data_dir"}.
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) => reject(new Error(`cas serve exited ${code}`)));
  });
  return { url, child };
}
