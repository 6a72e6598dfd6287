import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv } from './helpers/cli.js';
import { queryDataDir } from './helpers/fingerprint.js';
import { tempDir } from './helpers/temp.js';

/**
 * Under `ulimit -n 32` an import's DuckDB could not open a temporary file, failed a checkpoint
 * ("FATAL"), and the next run stored events twice and lost users (found by probing). Below the
 * files the database needs, the store is not opened at all.
 */
const dir = tempDir('cas-open-files-');
afterAll(() => dir.cleanup());

function underLimit(limit: number, args: string[], kind = '-n', env: Record<string, string> = {}) {
  const run = spawnSync(
    'sh',
    ['-c', `ulimit ${kind} ${limit} && exec "$@"`, 'sh', process.execPath, CAS_BIN, ...args],
    {
      env: cleanEnv(env),
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { code: run.status, stderr: run.stderr };
}

describe.skipIf(!existsSync('/proc/self/limits'))('a process allowed too few open files', () => {
  it('leaves the data directory alone: exit 5 naming the limit, and the same command runs under a higher one', async () => {
    const data = join(dir.path, 'data');
    const refused = underLimit(100, ['identify', '--id', 'alice', '--data-dir', data]);
    expect(refused.code, refused.stderr).toBe(5);
    expect(refused.stderr).toContain(
      `cas: the data directory ${data} cannot be used safely (only 100 files may be open at once, under ulimit -n; the database needs 128 to write safely)`,
    );
    expect(refused.stderr).toContain('hint: nothing was changed; raise the limit (ulimit -n 1024)');
    expect(existsSync(join(data, 'cas.duckdb'))).toBe(false);
    const ran = underLimit(1024, ['identify', '--id', 'alice', '--data-dir', data]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await queryDataDir(data, 'SELECT primary_id FROM users')).toEqual([{ primary_id: 'alice' }]);
  });
});

/**
 * Under `ulimit -v` V8 cannot reserve the address space of undici's WebAssembly parser (~10 GB of
 * guard regions): every request read "cannot reach …" after five attempts, exit 7 (found by probing).
 */
describe.skipIf(!existsSync('/proc/self/limits'))('a process under a virtual memory limit', () => {
  it('exit 5 at once, saying so, and the hint it gives lets the same command run under that limit', async () => {
    const data = join(dir.path, 'virtual');
    const args = ['identify', '--id', 'bob', '--data-dir', data];
    const started = Date.now();
    const refused = underLimit(3_000_000, args, '-v');
    expect(refused.code, refused.stderr).toBe(5);
    expect(Date.now() - started).toBeLessThan(7_000);
    expect(refused.stderr).toContain("the memory cas needs cannot be reserved under this process's limit");
    expect(refused.stderr).toContain('NODE_OPTIONS=--disable-wasm-trap-handler');
    const ran = underLimit(3_000_000, args, '-v', { NODE_OPTIONS: '--disable-wasm-trap-handler' });
    expect(ran.code, ran.stderr).toBe(0);
    expect(await queryDataDir(data, 'SELECT primary_id FROM users')).toEqual([{ primary_id: 'bob' }]);
  });
});
