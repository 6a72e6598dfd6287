import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/temp.js';
import { MIN_OPEN_FILES, openFilesLimit, tooFewOpenFiles } from './open-files.js';

const dir = tempDir('cas-open-files-');
afterAll(() => dir.cleanup());

function limits(soft: string): string {
  const file = join(dir.path, `limits-${soft}`);
  writeFileSync(
    file,
    `Limit                     Soft Limit           Hard Limit           Units
Max processes             63704                63704                processes
Max open files            ${soft}                 1048576              files
Max locked memory         8388608              8388608              bytes
`,
  );
  return file;
}

describe('openFilesLimit', () => {
  it("reads the soft limit of the system's table, and nothing where there is none", () => {
    expect(openFilesLimit(limits('32'))).toBe(32);
    expect(openFilesLimit(limits('unlimited'))).toBeUndefined();
    expect(openFilesLimit(join(dir.path, 'missing'))).toBeUndefined();
  });

  it('refuses a limit below what the database needs, naming both', () => {
    expect(tooFewOpenFiles(MIN_OPEN_FILES - 1)).toBe(
      `only ${MIN_OPEN_FILES - 1} files may be open at once, under ulimit -n; the database needs ${MIN_OPEN_FILES} to write safely`,
    );
    expect(tooFewOpenFiles(MIN_OPEN_FILES)).toBeUndefined();
  });
});
