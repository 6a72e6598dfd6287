import { describe, expect, it } from 'vitest';
import { classifyDataDirError, DataDirError, DataDirLockedError, storageProblemOf } from './lock-error.js';

const err = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('classifyDataDirError', () => {
  it("takes only DuckDB's lock message for a lock: a corrupt block is damage, in DuckDB's words", () => {
    const corrupt = err(
      'IO Error: Corrupt database file: computed checksum 1 does not match stored checksum 2 in block at location 4096',
    );
    const classified = classifyDataDirError(corrupt, '/d');
    expect(classified).toBeInstanceOf(DataDirError);
    expect(classified?.message).toBe(
      'the database in /d is damaged (IO Error: Corrupt database file: computed checksum 1 does not match stored checksum 2 in block at location 4096)',
    );
    const locked = err(
      'IO Error: Could not set lock on file "/d/cas.duckdb": Conflicting lock is held in /usr/bin/node (PID 1). See also https://duckdb.org/docs/stable/connect/concurrency',
    );
    expect(classifyDataDirError(locked, '/d')).toBeInstanceOf(DataDirLockedError);
  });

  it.each([
    ['IO Error: Could not write file "/d/cas.duckdb.wal": No space left on device', undefined, 'full'],
    [
      'TransactionContext Error: Failed to commit: Could not write file "x": File too large',
      undefined,
      'full',
    ],
    ['ENOSPC: no space left on device, write', 'ENOSPC', 'full'],
    ['IO Error: Cannot open file "/d/cas.duckdb": Read-only file system', undefined, 'read-only'],
    ["EROFS: read-only file system, open '/d/server.json'", 'EROFS', 'read-only'],
    ['IO Error: Cannot open file "/d/cas.duckdb": Permission denied', undefined, 'denied'],
    [
      'IO Error: Failure while replaying WAL file "/d/cas.duckdb.wal": Corrupt WAL file: entry at byte 24',
      undefined,
      'damaged',
    ],
  ] as const)('%s → %s', (message, code, problem) => {
    expect(storageProblemOf(err(message, code))).toBe(problem);
    expect((classifyDataDirError(err(message, code), '/d') as DataDirError).problem).toBe(problem);
  });

  it('leaves anything else alone (it stays a bug report)', () => {
    expect(classifyDataDirError(err('Binder Error: column x not found'), '/d')).toBeUndefined();
    expect(classifyDataDirError(err('the lock was released'), '/d')).toBeUndefined();
  });

  it('keeps a multi-line DuckDB message to its first line', () => {
    const e = classifyDataDirError(err('IO Error: Corrupt WAL file: x\nLINE 1: ...'), '/d');
    expect(e?.message).toBe('the database in /d is damaged (IO Error: Corrupt WAL file: x)');
  });
});
