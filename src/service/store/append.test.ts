import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendColumns } from './append.js';
import { type Database, openDatabase } from './database.js';

let dir: string;
let db: Database;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cas-append-'));
  db = await openDatabase(join(dir, 'cas.duckdb'));
  await db.write((tx) =>
    tx.run('CREATE TABLE t (s VARCHAR, ts TIMESTAMPTZ, n BIGINT, j JSON, b BOOLEAN, d DOUBLE)'),
  );
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Fractions, integers as large as the events' id hashes (below 2^53, exact), and nulls. */
const doubleOf = (i: number): number | null => (i % 11 === 0 ? null : i % 2 === 0 ? i / 4 : 2 ** 52 + i);

describe('appendColumns (the store: callers give plain values)', () => {
  it('converts epoch ms into TIMESTAMPTZ and numbers into BIGINT, keeps text, JSON, booleans, doubles and nulls', async () => {
    // More rows than one data chunk holds (2,048), with runs of equal timestamps and changes between them.
    const n = 5000;
    const base = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    const ms = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : base + Math.floor(i / 3) * 1000));
    await db.write((tx) =>
      appendColumns(tx, 't', [
        ms.map((_, i) => (i % 5 === 0 ? null : `row ${i}`)),
        ms,
        ms.map((_, i) => 2 ** 40 + i),
        ms.map((_, i) => JSON.stringify({ i })),
        ms.map((_, i) => i % 2 === 0),
        ms.map((_, i) => doubleOf(i)),
      ]),
    );
    const rows = await db.read.all<{
      s: string | null;
      ms: number | null;
      n: bigint;
      i: number;
      b: boolean;
      d: number | null;
    }>(`SELECT s, epoch_ms(ts)::DOUBLE AS ms, n, (j->>'i')::INTEGER AS i, b, d FROM t ORDER BY n`);
    expect(rows).toHaveLength(n);
    rows.forEach((r, i) => {
      expect(r).toEqual({
        s: i % 5 === 0 ? null : `row ${i}`,
        ms: ms[i],
        n: BigInt(2 ** 40 + i),
        i,
        b: i % 2 === 0,
        d: doubleOf(i),
      });
    });
  });

  it('stores every text as given: inline, repeated, long, non-ASCII, empty and NULL, across chunks', async () => {
    // Texts are written three ways (inline up to 12 bytes, a copy of the row before when equal, and
    // longer ones packed end to end behind pointers); runs of equal values, NULLs between them and
    // chunk edges mix them.
    const pool = [
      '',
      'a',
      'twelve chars',
      'thirteen char',
      'é',
      'naïve café',
      '😀 emoji',
      'x'.repeat(300),
      'a long text that DuckDB keeps behind a pointer',
    ];
    const cell = fc.oneof(fc.constantFrom(...pool, null), fc.string({ maxLength: 20 }));
    const runs = fc.array(fc.tuple(cell, fc.integer({ min: 1, max: 40 })), { minLength: 1, maxLength: 400 });
    let table = 0;
    await fc.assert(
      fc.asyncProperty(runs, fc.array(cell, { maxLength: 3000 }), async (r, scattered) => {
        const texts = [...r.flatMap(([v, n]) => Array.from({ length: n }, () => v)), ...scattered];
        const name = `texts_${table++}`;
        await db.write(async (tx) => {
          await tx.run(`CREATE TABLE ${name} (i INTEGER, s VARCHAR, j JSON)`);
          await appendColumns(tx, name, [
            texts.map((_, i) => i),
            texts,
            texts.map((v) => (v === null ? null : JSON.stringify(v))),
          ]);
        });
        const rows = await db.read.all<{ s: string | null; j: string | null }>(
          `SELECT s, j::VARCHAR AS j FROM ${name} ORDER BY i`,
        );
        expect(rows.map((row) => row.s)).toEqual(texts);
        expect(rows.map((row) => (row.j === null ? null : JSON.parse(row.j)))).toEqual(texts);
        // Stored texts compare as texts: equal ones, however each was written, are one group.
        const groups = await db.read.all<{ s: string; n: bigint }>(
          `SELECT s, count(*) AS n FROM ${name} WHERE s IS NOT NULL GROUP BY s`,
        );
        const counts = new Map<string, number>();
        for (const t of texts) if (t !== null) counts.set(t, (counts.get(t) ?? 0) + 1);
        expect(new Map(groups.map((g) => [g.s, Number(g.n)]))).toEqual(counts);
        await expectByteOrder(name, texts);
      }),
      { numRuns: 25 },
    );
  });

  it('packs long texts past one crossing’s bytes, and a text longer than that alone', async () => {
    const texts = Array.from({ length: 5000 }, (_, i) =>
      i === 3000
        ? `é${'y'.repeat(1_500_000)}`
        : `${i % 3 === 0 ? 'ü' : 'u'}${i}:${'z'.repeat(1000 + (i % 700))}`,
    );
    await db.write(async (tx) => {
      await tx.run('CREATE TABLE packed (i INTEGER, s VARCHAR)');
      await appendColumns(tx, 'packed', [texts.map((_, i) => i), texts]);
    });
    const rows = await db.read.all<{ s: string }>('SELECT s FROM packed ORDER BY i');
    expect(rows.length).toBe(texts.length);
    rows.forEach((row, i) => {
      if (row.s !== texts[i]) throw new Error(`row ${i} differs`);
    });
    await expectByteOrder('packed', texts);
  });

  /** DuckDB orders text by its UTF-8 bytes, comparing the slots' 4-byte prefixes first. */
  async function expectByteOrder(table: string, texts: ReadonlyArray<string | null>): Promise<void> {
    const order = await db.read.all<{ i: number }>(
      `SELECT i FROM ${table} WHERE s IS NOT NULL ORDER BY s, i`,
    );
    const expected = texts
      .map((t, i) => ({ t, i }))
      .filter((x): x is { t: string; i: number } => x.t !== null)
      .sort((a, b) => Buffer.compare(Buffer.from(a.t), Buffer.from(b.t)) || a.i - b.i)
      .map((x) => x.i);
    expect(order.map((r) => r.i)).toEqual(expected);
  }

  it('joins the open transaction: rows appended in a write that fails are not stored', async () => {
    const before = await db.read.one<{ c: bigint }>('SELECT count(*) AS c FROM t');
    await expect(
      db.write(async (tx) => {
        await appendColumns(tx, 't', [['x'], [0], [1], [null], [true], [0]]);
        throw new Error('the batch failed after its rows were appended');
      }),
    ).rejects.toThrow('the batch failed');
    expect(await db.read.one<{ c: bigint }>('SELECT count(*) AS c FROM t')).toEqual(before);
  });

  it('refuses a column count that is not the table’s, and text for a timestamp, naming the column type', async () => {
    await expect(db.write((tx) => appendColumns(tx, 't', [['x'], [0]]))).rejects.toThrow(
      't has 6 columns, 2 given',
    );
    await expect(
      db.write((tx) => appendColumns(tx, 't', [['x'], ['2025-01-01'], [1], [null], [true], [0]])),
    ).rejects.toThrow(/TIMESTAMP WITH TIME ZONE column takes numbers, not string/);
    await expect(
      db.write((tx) => appendColumns(tx, 't', [['x'], [0], [1], [null], [true], ['0.5']])),
    ).rejects.toThrow(/DOUBLE column takes numbers, not string/);
  });
});
