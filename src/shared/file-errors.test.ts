import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileErrorReason } from './file-errors.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-file-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reasonFor = (read: () => unknown): string => {
  try {
    read();
  } catch (error) {
    return fileErrorReason(error);
  }
  throw new Error('the read did not fail');
};

describe('fileErrorReason', () => {
  it('says in words why a real read failed', () => {
    expect(reasonFor(() => readFileSync(join(dir, 'missing.json')))).toBe('no such file');
    expect(reasonFor(() => readFileSync(dir))).toBe('it is a folder');
  });

  it('gives the code of other failures, and the error itself without one', () => {
    expect(fileErrorReason(Object.assign(new Error('x'), { code: 'ELOOP' }))).toBe('ELOOP');
    expect(fileErrorReason('odd')).toBe('odd');
  });
});
