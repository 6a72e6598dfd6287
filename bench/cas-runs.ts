import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childRun } from './child-run.js';

/** The built CLI, as a user runs it. */
export const CAS_BIN = fileURLToPath(new URL('../../bin/cas.js', import.meta.url));

export interface ImportRun {
  seconds: number;
  peakRssMb: number;
  /** The run's `--json` summary: the last line of stdout, or of stderr for a dry run (its stdout holds the events). */
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

/** Runs the built CLI; peak RSS is the kernel's high-water mark (VmHWM), polled until exit. */
export async function casImport(file: string, dataDir: string, extra: string[]): Promise<ImportRun> {
  const start = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [CAS_BIN, 'import', file, '--kind', 'turn', '--json', '--data-dir', dataDir, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  const { code, stdout, stderr, peakRssMb } = await childRun(child);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (code !== 0) throw new Error(`cas import exited ${code}: ${stderr.slice(-2000)}`);
  const summary = extra.includes('--dry-run') ? lastObject(stderr) : lastObject(stdout);
  if (summary === undefined) throw new Error(`cas import printed no summary: ${stderr.slice(-2000)}`);
  return { seconds, peakRssMb, summary };
}

/** '' when the run took every one of `records` and stopped for nothing; else what it said, flagged. */
export function complete(run: ImportRun, records: number): string {
  const s = run.summary;
  return Number(s.records) === records && Number(s.rejected) === 0 && s.stopped === false
    ? ''
    : ` INCOMPLETE ${JSON.stringify(s)}`;
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
