import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/shared/version.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 8: the single executable, run from a directory with no node_modules and no Node on PATH,
 * does the whole job: version, identify on the embedded default, an import and a chart.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const platform = `${process.platform}-${process.arch}`;
const dir = tempDir('cas-binary-');
const bin = join(dir.path, 'bin');
const exe = join(bin, `cas-${platform}`);
const empty = join(dir.path, 'empty-path');

beforeAll(() => {
  // dist/ is fresh (npm test builds first); this bundles it and injects it into a copy of node.
  execFileSync(process.execPath, [join(root, 'scripts', 'build-binary.mjs')], {
    cwd: root,
    stdio: 'ignore',
    // A hung build would block this worker (a sync call outlives the test timeout): cap it.
    timeout: 300_000,
  });
  mkdirSync(bin);
  mkdirSync(empty);
  for (const file of [`cas-${platform}`, 'duckdb.node', 'libduckdb.so']) {
    copyFileSync(join(root, 'dist', file), join(bin, file));
  }
  copyFileSync(join(root, 'fixtures', 'turns.csv'), join(dir.path, 'turns.csv'));
}, 120_000);
afterAll(() => dir.cleanup());

function cas(args: string[]) {
  const result = spawnSync(exe, args, {
    cwd: dir.path,
    encoding: 'utf8',
    timeout: 60_000,
    // Nothing on PATH: a Node install cannot be what makes this work.
    env: { PATH: empty, HOME: dir.path, CAS_DATA_DIR: join(dir.path, 'data'), NO_COLOR: '1' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.runIf(process.platform === 'linux')('single executable', () => {
  it('prints its version', () => {
    expect(cas(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('identifies a user on the embedded default', () => {
    const result = cas(['identify', '--id', 'u1', '--trait', 'plan=pro', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 'u1', traits: { plan: 'pro' } });
  });

  it('imports a file and charts it', () => {
    const imported = cas(['import', 'turns.csv', '--json']);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    const summary = JSON.parse(imported.stdout) as { records: number; rejected: number };
    expect(summary.rejected).toBe(0);
    const chart = cas([
      'chart',
      'segmentation',
      '--event',
      'Conversation Turn',
      '--from',
      '2025-01-06',
      '--to',
      '2025-02-02',
      '--tz',
      'UTC',
      '--format',
      'json',
    ]);
    expect(chart.code).toBe(0);
    const [series] = JSON.parse(chart.stdout) as Array<{ points: Array<{ total: number }> }>;
    const total = series?.points.reduce((sum, p) => sum + p.total, 0);
    expect(total).toBe(summary.records);
  });

  // Copied alone, it said "Cannot find module …/duckdb.node … this is a bug" (found by probing).
  it('copied without the DuckDB files beside it, says they are missing, not that it is a bug', () => {
    const alone = join(dir.path, 'alone');
    mkdirSync(alone);
    copyFileSync(exe, join(alone, 'cas'));
    const result = spawnSync(join(alone, 'cas'), ['events', '--data-dir', join(dir.path, 'alone-data')], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: empty, HOME: dir.path, NO_COLOR: '1' },
    });
    expect(result.status, result.stderr).toBe(1);
    expect(result.stderr).toMatch(
      /^cas: the DuckDB driver cannot be loaded: Cannot find module '.*\/duckdb\.node'$/m,
    );
    expect(result.stderr).toMatch(/duckdb\.node and libduckdb\.so beside it/);
    expect(result.stderr).not.toMatch(/this is a bug|Require stack/);
  });
});
