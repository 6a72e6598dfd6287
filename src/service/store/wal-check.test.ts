import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/temp.js';
import { checkWal } from './wal-check.js';

const dir = tempDir('cas-wal-check-');
afterAll(() => dir.cleanup());

/** A real DuckDB write-ahead log: three committed transactions, copied while the database is open. */
let wal: Buffer;
beforeAll(async () => {
  const path = join(dir.path, 'real.duckdb');
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  await connection.run('CREATE TABLE t (id INTEGER, text VARCHAR)');
  await connection.run("INSERT INTO t SELECT i, repeat('x', 50) FROM range(100) r(i)");
  await connection.run("INSERT INTO t SELECT i, repeat('y', 50) FROM range(100) r(i)");
  copyFileSync(`${path}.wal`, join(dir.path, 'copy.wal'));
  connection.closeSync();
  instance.closeSync();
  wal = readFileSync(join(dir.path, 'copy.wal'));
});

function verdict(bytes: Buffer) {
  const path = join(dir.path, `v-${Math.random()}.wal`);
  writeFileSync(path, bytes);
  return checkWal(path);
}

describe('checkWal', () => {
  it('accepts no log, an empty log and a whole log', () => {
    expect(checkWal(join(dir.path, 'none.wal'))).toEqual({ ok: true });
    expect(verdict(Buffer.alloc(0))).toEqual({ ok: true });
    expect(wal.length).toBeGreaterThan(100);
    expect(verdict(wal)).toEqual({ ok: true });
  });

  it('accepts a log whose last entry was cut short (a crash mid-write; that commit was never acknowledged)', () => {
    expect(verdict(wal.subarray(0, wal.length - 7))).toEqual({ ok: true });
    const header = Buffer.alloc(12);
    header.writeBigUInt64LE(4096n, 0);
    expect(verdict(Buffer.concat([wal, header.subarray(0, 5)]))).toEqual({ ok: true });
    expect(verdict(Buffer.concat([wal, header]))).toEqual({ ok: true });
  });

  it('refuses a log with garbage at its head, which DuckDB would skip whole', () => {
    const damaged = Buffer.from(wal);
    damaged.write('garbage!', 0, 'latin1');
    expect(verdict(damaged)).toEqual({
      ok: false,
      reason: `the write-ahead log does not begin with DuckDB's version entry, so DuckDB would skip all ${wal.length} bytes of it`,
    });
  });

  it('refuses a log whose entry sizes stop making sense part-way (garbage over an entry header)', () => {
    const damaged = Buffer.from(wal);
    // The first entry after the 8-byte version entry: its size field.
    damaged.write('garbage!', 8, 'latin1');
    const result = verdict(damaged);
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ reason: expect.stringMatching(/entry at byte 8 of \d+ is unreadable/) });
  });
});
