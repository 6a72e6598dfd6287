import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import {
  ROW_GROUP_ROWS,
  SMALL_TABLE_GROUPS,
  skipVacuumUnlessWorth,
  tableLayouts,
  tableSizes,
  worthVacuuming,
} from './vacuum-policy.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-vacuum-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const layout = (groups: number, live: number) => ({ table: 't', groups, live });

describe('worthVacuuming', () => {
  it('lets a table gain row groups up to half as many again as its live rows need, and 3 more', () => {
    // 687k rows need 6 groups: up to 12 are left as they are.
    expect(worthVacuuming(layout(8, 686_726))).toBe(false);
    expect(worthVacuuming(layout(12, 686_726))).toBe(false);
    expect(worthVacuuming(layout(13, 686_726))).toBe(true);
    expect(worthVacuuming(layout(6, ROW_GROUP_ROWS + 1))).toBe(false);
    expect(worthVacuuming(layout(7, ROW_GROUP_ROWS + 1))).toBe(true);
    // Rows deleted from full groups count as the groups they leave unneeded.
    expect(worthVacuuming(layout(10, ROW_GROUP_ROWS * 4))).toBe(true);
  });

  it('lets a table under one group’s rows gather up to SMALL_TABLE_GROUPS groups', () => {
    expect(worthVacuuming(layout(0, 0))).toBe(false);
    expect(worthVacuuming(layout(6, 50))).toBe(false);
    expect(worthVacuuming(layout(SMALL_TABLE_GROUPS, ROW_GROUP_ROWS - 1))).toBe(false);
    expect(worthVacuuming(layout(SMALL_TABLE_GROUPS + 1, 50))).toBe(true);
  });
});

/** Opens the store at `path`, runs `sql` in one transaction, and closes it (the close checkpoints). */
async function session(path: string, sql: string): Promise<void> {
  const db = await openDatabase(path);
  try {
    await db.write((tx) => tx.run(sql));
  } finally {
    await db.close();
  }
}

async function groupsOf(path: string, table: string): Promise<number[]> {
  const db = await openDatabase(path);
  try {
    const rows = await db.read.all<{ n: number }>(
      `SELECT sum(count)::DOUBLE AS n FROM pragma_storage_info($1)
       WHERE column_id = 0 AND segment_type <> 'VALIDITY' GROUP BY row_group_id ORDER BY row_group_id`,
      [table],
    );
    return rows.map((r) => r.n);
  } finally {
    await db.close();
  }
}

/** `n` rows of ~50 bytes each. */
const fill = (table: string, n: number) =>
  `INSERT INTO ${table} SELECT i, repeat('x', 40) || i FROM range(${n}) r(i)`;

describe('closing the store', () => {
  it('leaves row groups unmerged where DuckDB would rewrite full ones for a tail', async () => {
    const path = join(dir, 'tail.duckdb');
    await session(path, 'CREATE TABLE t (i INTEGER, s VARCHAR)');
    for (const n of [103_000, 103_000, 37_000]) await session(path, fill('t', n));
    expect(await groupsOf(path, 't')).toEqual([103_000, 103_000, 37_000]);
    // DuckDB's own vacuum merges the first three into two here (243,000 rows rewritten for 30,000).
    await session(path, fill('t', 30_000));
    expect(await groupsOf(path, 't')).toEqual([103_000, 103_000, 37_000, 30_000]);
    // Nor at the close of a later command that writes one row elsewhere, or nothing.
    await session(path, 'CREATE TABLE other (i INTEGER); INSERT INTO other VALUES (1)');
    await session(path, 'SELECT 1');
    expect(await groupsOf(path, 't')).toEqual([103_000, 103_000, 37_000, 30_000]);
  });

  it('lets DuckDB merge a table once it has more groups than it may keep', async () => {
    const path = join(dir, 'many.duckdb');
    await session(path, 'CREATE TABLE u (i INTEGER, s VARCHAR)');
    const counts: number[] = [];
    for (let k = 0; k < 7; k++) {
      await session(path, fill('u', 30_000));
      counts.push((await groupsOf(path, 'u')).length);
    }
    // Each close leaves the group its rows went into; at 210,000 rows (2 groups' worth) a seventh passes
    // the bound, and DuckDB merges four and three.
    expect(counts).toEqual([1, 2, 3, 4, 5, 6, 2]);
    expect(await groupsOf(path, 'u')).toEqual([120_000, 90_000]);
  });

  it('reads no layout when nothing was written, and vacuums where a layout cannot be read', async () => {
    const db = await openDatabase(join(dir, 'small.duckdb'));
    try {
      // A table no name can reach (its name holds a double quote): its layout cannot be read, so vacuum.
      await db.write((tx) => tx.run('CREATE TABLE "no ""reach""" (i INTEGER)'));
      expect(await skipVacuumUnlessWorth(db.readWritten, 1)).toBe(false);
      await db.write((tx) => tx.run('DROP TABLE "no ""reach"""'));
      // Every layout readable and none worth a vacuum: skipped, unless nothing was written.
      expect(await skipVacuumUnlessWorth(db.readWritten, 0)).toBe(false);
      expect(await skipVacuumUnlessWorth(db.readWritten, 1)).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('reads each table’s groups and live rows, writes not yet checkpointed included', async () => {
    const db = await openDatabase(join(dir, 'layout.duckdb'));
    try {
      await db.write((tx) => tx.run('CREATE TABLE "odd name.x" (i INTEGER)'));
      await db.write((tx) => tx.run(`INSERT INTO "odd name.x" SELECT i FROM range(10000) r(i)`));
      await db.write((tx) => tx.run(`DELETE FROM "odd name.x" WHERE i < 3000`));
      const layouts = await tableLayouts(db.readWritten);
      expect(layouts.find((l) => l.table === 'odd name.x')).toEqual({
        table: 'odd name.x',
        groups: 1,
        live: 7_000,
      });
      // The store's own tables are read too (empty here).
      expect(layouts.find((l) => l.table === 'events')).toEqual({ table: 'events', groups: 0, live: 0 });
    } finally {
      await db.close();
    }
  });

  /**
   * Seven groups of 30,000 rows in v where 210,000 need 2 (bound 6), made on purpose by checkpoints
   * that do not vacuum, so that whether a close reads v's layout shows in its groups; and a table w.
   */
  async function pastBound(path: string): Promise<void> {
    const db = await openDatabase(path);
    try {
      await db.write((tx) => tx.run('CREATE TABLE v (i INTEGER, s VARCHAR); CREATE TABLE w (i INTEGER)'));
      for (let k = 0; k < 7; k++) {
        await db.write((tx) => tx.run(fill('v', 30_000)));
        await db.readWritten.run('SET max_vacuum_tasks = 0');
        await db.readWritten.run('CHECKPOINT');
      }
    } finally {
      await db.close();
    }
    expect(await groupsOf(path, 'v')).toHaveLength(7);
  }

  it('reads again only the layouts of tables whose rows changed since the first write', async () => {
    const path = join(dir, 'since.duckdb');
    await pastBound(path);
    // A command that writes only w reads w's layout alone, and its close leaves v as it is.
    await session(path, 'INSERT INTO w VALUES (1)');
    expect(await groupsOf(path, 'v')).toHaveLength(7);
    // Deleting rows of v changes its live rows: the close reads it, finds it past its bound and merges.
    await session(path, 'DELETE FROM v WHERE i = 0');
    expect((await groupsOf(path, 'v')).length).toBeLessThanOrEqual(3);
  });

  it('reads every layout once a commit checkpointed after the sizes were taken', async () => {
    const path = join(dir, 'checkpointed.duckdb');
    await pastBound(path);
    const db = await openDatabase(path);
    try {
      // A checkpoint at a commit (one that vacuums drops deleted rows from the counts); this one does
      // not vacuum, or DuckDB would merge v itself.
      await db.readWritten.run('SET max_vacuum_tasks = 0');
      await db.readWritten.run("SET checkpoint_threshold = '1B'");
      await db.write((tx) => tx.run('INSERT INTO w VALUES (1)'));
      await db.readWritten.run('SET max_vacuum_tasks = 100');
      await db.readWritten.run("SET checkpoint_threshold = '128MB'");
      await db.write((tx) => tx.run('INSERT INTO w VALUES (2)'));
    } finally {
      await db.close();
    }
    expect((await groupsOf(path, 'v')).length).toBeLessThanOrEqual(3);
  });

  it('reads every layout when the store was written before the sizes could be taken', async () => {
    const path = join(dir, 'replayed.duckdb');
    await session(path, 'CREATE TABLE v (i INTEGER, s VARCHAR)');
    // A process that never closed the store (killed): its rows are in the WAL, which the next open replays.
    const killed = await DuckDBInstance.create(path);
    const c = await killed.connect();
    try {
      await c.run('SET max_vacuum_tasks = 0');
      for (let k = 0; k < 7; k++) {
        await c.run(fill('v', 30_000));
        await c.run('CHECKPOINT');
      }
      await c.run('PRAGMA disable_checkpoint_on_shutdown');
      await c.run(fill('v', 1_000));
    } finally {
      c.closeSync();
      killed.closeSync();
    }
    // Sized after the replay, v would look unwritten; the close reads it, finds it past its bound, merges.
    await session(path, 'CREATE TABLE w (i INTEGER); INSERT INTO w VALUES (1)');
    expect((await groupsOf(path, 'v')).length).toBeLessThanOrEqual(3);
  });

  it('tells which tables changed: rows appended, rows deleted, tables made anew', async () => {
    const db = await openDatabase(join(dir, 'sizes.duckdb'));
    try {
      await db.write((tx) =>
        tx.run(`CREATE TABLE a (i INTEGER); CREATE TABLE b (i INTEGER); CREATE TABLE c (i INTEGER);
          CREATE TABLE e (i INTEGER); INSERT INTO a SELECT i FROM range(100) r(i); INSERT INTO b SELECT i FROM range(100) r(i)`),
      );
      const before = await tableSizes(db.readWritten);
      expect(before.get('a')).toMatchObject({ rows: 100, live: 100 });
      expect(await tableLayouts(db.readWritten, before)).toEqual([]);
      await db.write((tx) =>
        tx.run(`INSERT INTO a VALUES (1); DELETE FROM b WHERE i < 10; CREATE TABLE d (i INTEGER);
          DROP TABLE c; CREATE TABLE c (i INTEGER)`),
      );
      // e is as it was; a grew, b lost live rows (its count of rows keeps them until a checkpoint), c is
      // another table of the same name and size, d is new.
      expect((await tableSizes(db.readWritten)).get('b')).toMatchObject({ rows: 100, live: 90 });
      const changed = await tableLayouts(db.readWritten, before);
      expect(changed.map((l) => l.table)).toEqual(['a', 'b', 'c', 'd']);
      expect(changed[1]).toEqual({ table: 'b', groups: 1, live: 90 });
    } finally {
      await db.close();
    }
  });
});
