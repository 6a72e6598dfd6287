import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { OWN_THREAD_MIN_BYTES } from '../src/commands/import-thread.js';
import { CAS_BIN, cleanEnv } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const hook = fileURLToPath(new URL('./support/trace-loads.mjs', import.meta.url));
/** The CLI's modules one by one: what the build bundles (bin/cas.js runs the bundle when there is one). */
const MODULES_ENTRY = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const dir = tempDir('cas-startup-');
afterAll(() => dir.cleanup());

/** What a CLI invocation loads (ES module URLs and `require:<id>` lines), and its exit code. */
function loads(entry: string, args: string[], name: string): { code: number | null; urls: string[] } {
  const file = join(dir.path, `${name}.txt`);
  const result = spawnSync(process.execPath, ['--import', hook, entry, ...args], {
    env: cleanEnv({ CAS_TRACE_FILE: file }),
    encoding: 'utf8',
    // A hung child would block this worker (a sync call outlives the test timeout): cap it.
    timeout: 60_000,
  });
  return { code: result.status, urls: readFileSync(file, 'utf8').trim().split('\n') };
}

// service/lock-error.js is allowed: a dependency-free error class the exit-code mapping needs.
const HEAVY_MODULES = /@duckdb|\/fastify\/|\/undici\/|\/service\/(?!lock-error\.js)|\/zod\//;
// Inside the bundle, the heavy stacks show as what they require: DuckDB's binding, and the HTTP
// server (fastify) and client (undici).
const HEAVY_REQUIRES = /^require:(@duckdb\/|(node:)?(http|https|http2|net)$)/;
const LOADER = new URL('../dist/service/embedded-loader.js', import.meta.url).href;
const FIXTURE = fileURLToPath(new URL('../fixtures/turns.csv', import.meta.url));

describe('command-line start-up (issue 8)', () => {
  const light = [
    [['--help'], 'help'],
    [['--version'], 'version'],
    [['chart', '--help'], 'chart-help'],
    [['import', '--help'], 'import-help'],
  ] as const;

  it.each(light)('cas %j loads no database, HTTP stack or schemas module', (args, name) => {
    const { code, urls } = loads(MODULES_ENTRY, [...args], `modules-${name}`);
    expect(code).toBe(0);
    expect(urls.some((u) => u.includes('/dist/cli/program.js'))).toBe(true);
    expect(urls.filter((u) => HEAVY_MODULES.test(u))).toEqual([]);
  });

  it.each(light)('cas %j through the bundle starts no database or HTTP stack', (args, name) => {
    const { code, urls } = loads(CAS_BIN, [...args], `bundle-${name}`);
    expect(code).toBe(0);
    expect(urls).toContain(new URL('../dist/cli/launch.js', import.meta.url).href);
    // The bundle ran: the CLI's modules were not loaded one by one.
    expect(urls.some((u) => u.includes('/dist/cli/program.js'))).toBe(false);
    expect(urls.filter((u) => HEAVY_MODULES.test(u) || HEAVY_REQUIRES.test(u))).toEqual([]);
  });

  it('a command that fails before it connects touches no data directory', () => {
    const data = join(dir.path, 'never-made');
    const chart = loads(
      CAS_BIN,
      ['chart', 'segmentation', '--event', 'E', '--period', 'fortnight', '--data-dir', data],
      'usage-error',
    );
    expect(chart.code).toBe(2);
    expect(chart.urls.filter((u) => u.startsWith('require:@duckdb/') || u === LOADER)).toEqual([]);
    // A big import starts the service's thread loading its code at once (main.ts), and leaves it unused.
    const big = join(dir.path, 'big.csv');
    writeFileSync(big, `timestamp,user_id,user\n${'2025-01-01T00:00:00Z,u,hello\n'.repeat(160_000)}`);
    const imported = loads(
      CAS_BIN,
      ['import', big, '--kind', 'nonsense', '--data-dir', data],
      'import-error',
    );
    expect(imported.code).toBe(2);
    expect(imported.urls).toContain(LOADER);
    expect(existsSync(data)).toBe(false);
  });

  it('a small import runs the embedded service on its own thread, a big one on a thread of its own', () => {
    const small = loads(CAS_BIN, ['import', FIXTURE, '--data-dir', join(dir.path, 'small')], 'small-import');
    expect(small.code).toBe(0);
    expect(small.urls).toContain('require:@duckdb/node-bindings');
    expect(small.urls).not.toContain(LOADER);
    const big = join(dir.path, 'big-turns.csv');
    const [header, ...rows] = readFileSync(FIXTURE, 'utf8').trimEnd().split('\n');
    const body = `${rows.join('\n')}\n`;
    writeFileSync(big, `${header}\n${body.repeat(Math.ceil(OWN_THREAD_MIN_BYTES / body.length))}`);
    const large = loads(CAS_BIN, ['import', big, '--data-dir', join(dir.path, 'large')], 'large-import');
    expect(large.code).toBe(0);
    expect(large.urls).toContain(LOADER);
  });

  it("a command other than import runs the embedded service on the command's own thread", () => {
    const data = join(dir.path, 'data');
    // The tracer's positive case: the service's stacks show up when a command does load them.
    const identify = loads(CAS_BIN, ['identify', '--id', 'x', '--data-dir', data], 'identify');
    expect(identify.code).toBe(0);
    expect(identify.urls).toContain('require:@duckdb/node-bindings');
    expect(identify.urls).toContain('require:node:http');
    expect(identify.urls).not.toContain(LOADER);
  });
});
