import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const hook = fileURLToPath(new URL('./support/trace-loads.mjs', import.meta.url));
const dir = tempDir('cas-startup-');
afterAll(() => dir.cleanup());

/** The module URLs a CLI invocation loads (through an ESM loader hook), and its exit code. */
function loads(args: string[], name: string): { code: number | null; urls: string[] } {
  const file = join(dir.path, `${name}.txt`);
  const result = spawnSync(process.execPath, ['--import', hook, CAS_BIN, ...args], {
    env: cleanEnv({ CAS_TRACE_FILE: file }),
    encoding: 'utf8',
    // A hung child would block this worker (a sync call outlives the test timeout): cap it.
    timeout: 60_000,
  });
  return { code: result.status, urls: readFileSync(file, 'utf8').trim().split('\n') };
}

// service/lock-error.js is allowed: a dependency-free error class the exit-code mapping needs.
const HEAVY = /@duckdb|\/fastify\/|\/undici\/|\/service\/(?!lock-error\.js)|\/zod\//;

describe('command-line start-up (issue 8)', () => {
  it.each([
    [['--help'], 'help'],
    [['--version'], 'version'],
    [['chart', '--help'], 'chart-help'],
    [['import', '--help'], 'import-help'],
  ])('cas %j loads no database, HTTP stack or schemas', (args, name) => {
    const { code, urls } = loads(args, name);
    expect(code).toBe(0);
    expect(urls.some((u) => u.includes('/dist/cli/program.js'))).toBe(true);
    expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
  });

  it('a command that fails before it connects touches no data directory, though its service thread was warming', () => {
    const data = join(dir.path, 'never-made');
    const { code, urls } = loads(
      ['chart', 'segmentation', '--event', 'E', '--period', 'fortnight', '--data-dir', data],
      'usage-error',
    );
    expect(code).toBe(2);
    // The thread started loading the service's code (main.ts prewarms it), then was left to end with the process.
    expect(urls).toContain(new URL('../dist/service/embedded-loader.js', import.meta.url).href);
    expect(existsSync(data)).toBe(false);
  });

  it('the tracer sees the heavy stacks when a command does load them', () => {
    const { urls } = loads(['identify', '--id', 'x', '--data-dir', join(dir.path, 'data')], 'identify');
    // The service's thread runs one file that bundles DuckDB's API, fastify and the rest
    // (scripts/bundle-worker.mjs), through its loader, which runs it as a script with its code cache
    // (so the bundle itself is no module load); its modules one by one only where there is no bundle.
    const heavy = urls.filter((u) => HEAVY.test(u));
    expect(heavy).toContain(new URL('../dist/service/embedded-loader.js', import.meta.url).href);
  });
});
