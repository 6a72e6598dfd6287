import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellValue } from './append.js';
import { type Database, openDatabase } from './database.js';
import { StagedAppend } from './staged-append.js';
import { execWhile } from './statements.js';

let dir: string;
let db: Database;
let other: Database;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cas-staged-'));
  db = await openDatabase(join(dir, 'a.duckdb'));
  other = await openDatabase(join(dir, 'b.duckdb'));
  await db.write((tx) => tx.run('CREATE TABLE staged (s VARCHAR, ts TIMESTAMPTZ, n BIGINT)'));
  // Same name, other column types: chunks built on the first database's types do not fit it.
  await other.write((tx) => tx.run('CREATE TABLE staged (s VARCHAR, n VARCHAR, ts TIMESTAMPTZ)'));
  await db.write((tx) => tx.run('CREATE TABLE other_t (n INTEGER)'));
});
afterAll(async () => {
  await Promise.allSettled([db?.close(), other?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2025, 4, 6, 7, 8, 9, 100);
const rowsOf = (n: number, tag: string): CellValue[][] => [
  Array.from({ length: n }, (_, i) => `${tag} ${i} ✓`),
  Array.from({ length: n }, (_, i) => T0 + i * 1000),
  Array.from({ length: n }, (_, i) => i),
];

async function stored(d: Database, tag: string) {
  return d.read.all<{ s: string; ms: number; n: string }>(
    `SELECT s, epoch_ms(ts)::DOUBLE AS ms, n::VARCHAR AS n FROM staged WHERE s LIKE $1 ORDER BY ts`,
    [`${tag} %`],
  );
}

describe('StagedAppend (an append whose data chunks are made ahead of it)', () => {
  it('makes its chunks at prepare(), so the rows stored are the ones given then', async () => {
    // The first append of the table in this test teaches it the table's column types.
    await db.write((tx) => new StagedAppend('staged', () => rowsOf(3, 'first')).append(tx));
    let made = 0;
    const columns = rowsOf(2500, 'ahead');
    const staged = new StagedAppend('staged', () => {
      made++;
      return columns;
    });
    staged.prepare();
    // Changed after prepare(): a staged append that had not built its chunks would store these.
    columns[0]?.fill('changed later');
    await db.write((tx) => staged.append(tx));
    expect(made).toBe(1);
    const rows = await stored(db, 'ahead');
    expect(rows).toHaveLength(2500);
    rows.forEach((r, i) => {
      expect(r).toEqual({ s: `ahead ${i} ✓`, ms: T0 + i * 1000, n: String(i) });
    });
    expect(await stored(db, 'changed')).toEqual([]);
  });

  it("builds again on the table's own types when the prepared ones do not match", async () => {
    await db.write((tx) => new StagedAppend('staged', () => rowsOf(1, 'teach')).append(tx));
    // Prepared on the first database's types (s, ts, n); the other database's table is (s, n, ts).
    const staged = new StagedAppend('staged', () => [['elsewhere 0'], ['42'], [T0]]);
    staged.prepare();
    await other.write((tx) => staged.append(tx));
    const rows = await other.read.all<{ s: string; n: string; ms: number }>(
      `SELECT s, n, epoch_ms(ts)::DOUBLE AS ms FROM staged`,
    );
    expect(rows).toEqual([{ s: 'elsewhere 0', n: '42', ms: T0 }]);
  });

  it('prepare() never throws (a statement may be in flight); append() reports the bad row', async () => {
    await db.write((tx) => new StagedAppend('other_t', () => [[1]]).append(tx));
    const staged = new StagedAppend('other_t', () => [['not a number']]);
    expect(() => staged.prepare()).not.toThrow();
    await expect(db.write((tx) => staged.append(tx))).rejects.toThrow();
    expect(await db.read.all(`SELECT n FROM other_t ORDER BY n`)).toEqual([{ n: 1 }]);
  });

  it('prepares nothing for a table it has not appended to yet, and appends it all the same', async () => {
    await db.write((tx) => tx.run('CREATE TABLE fresh_t (s VARCHAR)'));
    let made = 0;
    const staged = new StagedAppend('fresh_t', () => {
      made++;
      return [['x', 'y']];
    });
    staged.prepare();
    expect(made).toBe(0);
    await db.write((tx) => staged.append(tx));
    expect(made).toBe(1);
    expect(await db.read.all(`SELECT s FROM fresh_t ORDER BY s`)).toEqual([{ s: 'x' }, { s: 'y' }]);
  });
});

describe('execWhile', () => {
  it('lets the statement finish when the work done meanwhile throws, and reports that error', async () => {
    const failing = () => {
      throw new Error('meanwhile failed');
    };
    await expect(
      db.write((tx) => execWhile(tx, `INSERT INTO other_t VALUES (7)`, [], failing)),
    ).rejects.toThrow('meanwhile failed');
    // The connection still serves, and the failed transaction kept nothing.
    expect(await db.read.all(`SELECT n FROM other_t WHERE n = 7`)).toEqual([]);
    await db.write((tx) => execWhile(tx, `INSERT INTO other_t VALUES (8)`, [], () => undefined));
    expect(await db.read.all(`SELECT n FROM other_t WHERE n = 8`)).toEqual([{ n: 8 }]);
  });
});
