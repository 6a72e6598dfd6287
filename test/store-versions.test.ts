import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/service/store/migrations.js';
import { runCli } from './helpers/cli.js';
import { queryDataDir } from './helpers/fingerprint.js';
import { tempDir } from './helpers/temp.js';

/**
 * Data directories other builds of cas wrote. One a newer cas migrated further was opened anyway: its
 * reads worked and every write was a 500 "internal error" after five retries, and an import said its
 * checkpoint would resume it (found by probing upgrades).
 */
const dir = tempDir('cas-store-versions-');
afterAll(() => dir.cleanup());

const known = Math.max(...MIGRATIONS.map((m) => m.version));

async function run(sql: string, data: string): Promise<void> {
  const instance = await DuckDBInstance.create(join(data, 'cas.duckdb'));
  const c = await instance.connect();
  try {
    await c.run(sql);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

describe('a data directory a newer cas wrote', () => {
  it('is refused by every command with exit 5 naming it, and left as it was', async () => {
    const data = join(dir.path, 'newer');
    const made = await runCli(['identify', '--id', 'before', '--data-dir', data]);
    expect(made.code, made.stderr).toBe(0);
    await run(`INSERT INTO schema_migrations VALUES (${known + 1}, 'from a newer cas', now())`, data);
    const file = join(dir.path, 'turns.csv');
    writeFileSync(file, 'timestamp,user_id,user,assistant\n2026-01-01T00:00:00Z,u1,hi,hello\n');
    const line = `cas: the data directory ${data} was written by a newer version of cas (its store is at version ${known + 1}; this cas knows versions up to ${known})`;
    for (const args of [
      ['identify', '--id', 'after'],
      ['import', file, '--kind', 'turn'],
      ['serve', '--port', '0'],
    ]) {
      const result = await runCli([...args, '--data-dir', data], { timeoutMs: 60_000 });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(5);
      expect(result.stderr.split('\n')[0], args[0]).toBe(line);
      expect(result.stderr).not.toMatch(/checkpoint|this is a bug|internal error/);
    }
    const users = await queryDataDir(data, 'SELECT primary_id FROM users ORDER BY 1');
    expect(users).toEqual([{ primary_id: 'before' }]);
  }, 120_000);
});
