import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importNeedsOwnThread, OWN_THREAD_MIN_BYTES } from './import-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-import-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: number): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.alloc(bytes, 'x'));
  return path;
}

describe('importNeedsOwnThread', () => {
  it('counts the inputs together against the threshold', () => {
    const half = OWN_THREAD_MIN_BYTES / 2;
    expect(importNeedsOwnThread([file('a.csv', half - 1)])).toBe(false);
    expect(importNeedsOwnThread([file('b.csv', half - 1), file('c.csv', half)])).toBe(false);
    expect(importNeedsOwnThread([file('d.csv', half), file('e.csv', half)])).toBe(true);
  });

  it('counts a gzipped file at what it likely holds, and standard input as big', () => {
    expect(importNeedsOwnThread([file('f.jsonl.gz', OWN_THREAD_MIN_BYTES / 8)])).toBe(true);
    expect(importNeedsOwnThread([file('g.jsonl.gz', OWN_THREAD_MIN_BYTES / 8 - 1)])).toBe(false);
    expect(importNeedsOwnThread(['-'])).toBe(true);
  });

  it('counts a file it cannot read as empty', () => {
    expect(importNeedsOwnThread([join(dir, 'missing.csv')])).toBe(false);
  });
});
