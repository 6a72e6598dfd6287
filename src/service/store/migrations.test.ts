import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreTooNewError } from '../lock-error.js';
import { openDatabase, queryable } from './database.js';
import { MIGRATIONS, migrate } from './migrations.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cas-migrations-'));
  dirs.push(dir);
  return join(dir, 'cas.duckdb');
}

/** A database as a release with only migration 1 left it, holding one row in each rebuilt table. */
async function versionOneDatabase(path: string): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  const c = await instance.connect();
  await c.run(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ)',
  );
  await c.run(MIGRATIONS[0]!.sql);
  await c.run("INSERT INTO schema_migrations VALUES (1, 'v1', now())");
  await c.run(
    `INSERT INTO users VALUES ('p', 'u1', 'u1', 'alice', false, '{"plan":"pro"}', '2025-01-01T00:00:00Z')`,
  );
  await c.run(`INSERT INTO user_ids VALUES ('p', 'alice', 'u1', 1)`);
  await c.run(`INSERT INTO devices VALUES ('p', 'd1', 'u1', NULL)`);
  await c.run(
    `INSERT INTO sessions VALUES ('p', 's1', 'u1', 'd1', '2025-01-01T00:00:00Z', NULL, '2025-01-01T00:01:00Z', '{"a":1}')`,
  );
  await c.run(`INSERT INTO conversations VALUES ('p', 'c1', 's1', '2025-01-01T00:00:00Z', NULL, NULL)`);
  c.closeSync();
  instance.closeSync();
}

describe('migrations', () => {
  it('bring a version-1 database up to date, keeping every row and NOT NULL, dropping the key indexes', async () => {
    const path = tempPath();
    await versionOneDatabase(path);
    const db = await openDatabase(path);
    try {
      const versions = await db.read.all<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY 1',
      );
      expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((m) => m.version));
      for (const table of ['users', 'user_ids', 'devices', 'sessions', 'conversations']) {
        const row = await db.read.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
        expect(Number(row?.n), table).toBe(1);
      }
      const traits = await db.read.one<{ plan: string }>("SELECT traits->>'plan' AS plan FROM users");
      expect(traits?.plan).toBe('pro');
      const keys = await db.read.all(
        `SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'
           AND table_name IN ('users', 'user_ids', 'devices', 'sessions', 'conversations')`,
      );
      expect(keys).toEqual([]);
      await expect(
        db.write((tx) => tx.run("INSERT INTO sessions (project_id, session_id) VALUES ('p', 's2')")),
      ).rejects.toThrow(/NOT NULL/);
    } finally {
      await db.close();
    }
  });

  it('run once: reopening applies nothing twice', async () => {
    const path = tempPath();
    await (await openDatabase(path)).close();
    const db = await openDatabase(path);
    try {
      const rows = await db.read.all('SELECT version FROM schema_migrations');
      expect(rows).toHaveLength(MIGRATIONS.length);
    } finally {
      await db.close();
    }
  });

  it('apply the pending ones whole or not at all: a failing one leaves no table of the others', async () => {
    const instance = await DuckDBInstance.create(tempPath());
    const c = await instance.connect();
    const db = queryable(c);
    try {
      await migrate(db, [{ version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER)' }]);
      const more = [
        { version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER)' },
        { version: 2, name: 'two', sql: 'CREATE TABLE b (x INTEGER)' },
        { version: 3, name: 'broken', sql: 'ALTER TABLE nowhere ADD COLUMN y INTEGER' },
      ];
      await expect(migrate(db, more)).rejects.toThrow(/nowhere/);
      const tables = await db.all<{ name: string }>(
        "SELECT table_name AS name FROM duckdb_tables() WHERE table_name IN ('a', 'b') ORDER BY 1",
      );
      expect(tables.map((t) => t.name)).toEqual(['a']);
      const versions = await db.all<{ version: number }>('SELECT version FROM schema_migrations');
      expect(versions.map((v) => Number(v.version))).toEqual([1]);
      // Mended, it applies what is pending.
      await migrate(db, [
        ...more.slice(0, 2),
        { version: 3, name: 'mended', sql: 'ALTER TABLE b ADD COLUMN y INTEGER' },
      ]);
      const after = await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY 1');
      expect(after.map((v) => Number(v.version))).toEqual([1, 2, 3]);
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  });

  // Opened anyway, a newer build's store answered reads and failed every write with an internal
  // error (found by probing upgrades).
  it('refuse a store a newer build migrated further, and change nothing in it', async () => {
    const instance = await DuckDBInstance.create(tempPath());
    const c = await instance.connect();
    const db = queryable(c);
    try {
      await migrate(db, [{ version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER)' }]);
      await db.run("INSERT INTO schema_migrations VALUES (3, 'from a newer cas', now())");
      const known = [
        { version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER)' },
        { version: 2, name: 'two', sql: 'CREATE TABLE b (x INTEGER)' },
      ];
      const refused = migrate(db, known);
      await expect(refused).rejects.toBeInstanceOf(StoreTooNewError);
      await expect(refused).rejects.toThrow('its store is at version 3; this cas knows versions up to 2');
      const tables = await db.all<{ name: string }>(
        "SELECT table_name AS name FROM duckdb_tables() WHERE table_name = 'b'",
      );
      expect(tables).toEqual([]);
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  });
});
