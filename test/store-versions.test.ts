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

describe('a data directory an earlier cas wrote, before the times of traits, ids and device links were kept', () => {
  /** The migration that fills those times in (migrations.ts). */
  const BACKFILL = 11;
  const newer = [
    {
      kind: 'identify',
      timestamp: '2025-02-01T00:00:00Z',
      id: 'x1',
      device_id: 'dx',
      traits: { plan: 'team' },
    },
    { kind: 'alias', timestamp: '2025-02-02T00:00:00Z', id: 'x1-new', previous_id: 'x1' },
    {
      kind: 'turn',
      timestamp: '2025-02-03T00:00:00Z',
      user_id: 'x1-new',
      device_id: 'dx',
      session_id: 's1',
      user: 'hi',
      assistant: 'hello',
    },
  ];
  const older = [
    { kind: 'identify', timestamp: '2025-01-01T00:00:00Z', id: 'x1', traits: { plan: 'free' } },
    { kind: 'alias', timestamp: '2025-01-02T00:00:00Z', id: 'x1-old', previous_id: 'x1' },
    { kind: 'identify', timestamp: '2024-12-01T00:00:00Z', id: 'y1', device_id: 'dx' },
  ];
  const jsonl = (name: string, records: unknown[]) => {
    const file = join(dir.path, name);
    writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return file;
  };

  // Migrations 7-8 left those times null, older than any time: an older export imported next put back
  // its traits, primary id and device owner (found by probing upgrades).
  it('keeps what a later export wrote when an older one is imported after the upgrade', async () => {
    const data = join(dir.path, 'earlier');
    const first = await runCli(['import', jsonl('newer.jsonl', newer), '--data-dir', data]);
    expect(first.code, first.stderr).toBe(0);
    // The store as migrations 7 and 8 left an earlier cas's: no times, the backfill not yet applied,
    // nor the later migrations (no event id hashes: its re-sent events are found by their text).
    await run(
      `UPDATE users SET trait_times = NULL, primary_at = NULL; UPDATE devices SET linked_at = NULL;
       ALTER TABLE events DROP COLUMN id_hash;
       DELETE FROM schema_migrations WHERE version >= ${BACKFILL}`,
      data,
    );
    const second = await runCli(['import', jsonl('older.jsonl', older), '--data-dir', data]);
    expect(second.code, second.stderr).toBe(0);
    const shown = await runCli(['users', 'show', 'x1', '--json', '--data-dir', data]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'x1-new', traits: { plan: 'team' } });
    const owner = await queryDataDir(
      data,
      "SELECT u.primary_id FROM devices d JOIN users u ON u.project_id = d.project_id AND u.user_id = d.user_id WHERE d.device_id = 'dx'",
    );
    expect(owner).toEqual([{ primary_id: 'x1-new' }]);
  }, 120_000);
});
