import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * Standard output that cannot be written: `> file` on a full disk (/dev/full). Every command exited 0
 * with nothing written, `keys create` too, whose secret is shown once (found by probing).
 */
const dir = tempDir('cas-output-errors-');
afterAll(() => dir.cleanup());

function toFullDisk(args: string[]) {
  const out = openSync('/dev/full', 'w');
  try {
    const run = spawnSync(process.execPath, [CAS_BIN, ...args], {
      env: cleanEnv(),
      stdio: ['ignore', out, 'pipe'],
      timeout: 60_000,
      encoding: 'utf8',
    });
    return { code: run.status, stderr: run.stderr };
  } finally {
    closeSync(out);
  }
}

describe.skipIf(!existsSync('/dev/full'))('standard output on a full disk', () => {
  const line =
    'cas: cannot write standard output: the disk is full (ENOSPC); what this command printed there is lost';

  it('exits 5 saying so, from --version to a command that made something', () => {
    const version = toFullDisk(['--version']);
    expect(version.code).toBe(5);
    expect(version.stderr.trim()).toBe(line);
    const created = toFullDisk(['keys', 'create', '--label', 'lost', '--data-dir', join(dir.path, 'data')]);
    expect(created.code).toBe(5);
    expect(created.stderr.trim().split('\n').at(-1)).toBe(line);
  });
});
