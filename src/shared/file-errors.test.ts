import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileErrorReason, pathProblem } from './file-errors.js';

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
    expect(fileErrorReason(Object.assign(new Error('x'), { code: 'EBUSY' }))).toBe('EBUSY');
    expect(fileErrorReason('odd')).toBe('odd');
  });

  it('says in words what is wrong with a path as written, naming it shortened', () => {
    const loop = Object.assign(new Error('x'), { code: 'ELOOP', path: '/a/b' });
    expect(fileErrorReason(loop)).toBe('its symbolic links form a loop');
    expect(pathProblem(loop)).toBe('cannot use /a/b: its symbolic links form a loop');
    const long = Object.assign(new Error('x'), { code: 'ENAMETOOLONG', path: `/x/${'n'.repeat(300)}` });
    expect(pathProblem(long)).toMatch(/^cannot use \/x\/n{57}…n{40}: a name in the path is too long$/);
    expect(pathProblem(Object.assign(new Error('x'), { code: 'EACCES', path: '/a' }))).toBeUndefined();
  });
});
