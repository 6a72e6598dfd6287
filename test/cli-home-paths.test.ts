import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * A data directory given as `~/…` where no shell expands it (quoted, a variable, a config file):
 * DuckDB put the database under the home folder and cas the rest (credentials, server.json,
 * checkpoints) under a folder named `~` in the working directory (found by probing).
 */
const dir = tempDir('cas-home-paths-');
afterAll(() => dir.cleanup());

describe('a data directory under ~', () => {
  it('is under the home folder, whether from the flag, CAS_DATA_DIR or a config file', async () => {
    const home = join(dir.path, 'home');
    const cwd = join(dir.path, 'cwd');
    mkdirSync(home);
    mkdirSync(cwd);
    const config = join(dir.path, 'config');
    mkdirSync(join(config, 'cas'), { recursive: true });
    // With a byte order mark, as Windows editors save UTF-8: refused as "Unexpected token" (found by probing).
    writeFileSync(
      join(config, 'cas', 'config.json'),
      `\ufeff${JSON.stringify({ default_profile: 'p', profiles: { p: { data_dir: '~/from-config' } } })}`,
    );
    const runs = [
      { args: ['--data-dir', '~/from-flag'], env: {}, folder: 'from-flag' },
      { args: [], env: { CAS_DATA_DIR: '~/from-env' }, folder: 'from-env' },
      { args: [], env: { XDG_CONFIG_HOME: config }, folder: 'from-config' },
    ];
    for (const run of runs) {
      const result = await runCli(['identify', '--id', 'alice', ...run.args], {
        cwd,
        env: { HOME: home, ...run.env },
      });
      expect(result.code, result.stderr).toBe(0);
      for (const file of ['cas.duckdb', 'credentials.json'])
        expect(existsSync(join(home, run.folder, file)), `${run.folder}/${file}`).toBe(true);
    }
    expect(existsSync(join(cwd, '~'))).toBe(false);
  }, 60_000);
});
