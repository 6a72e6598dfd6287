import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/shared/version.js';
import { cleanEnv, npmEnv } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = (args: string[], cwd = root) =>
  // --ignore-scripts: prepack's clean rebuild would pull dist/ from under tests running beside this one.
  execFileSync('npm', [...args, '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd,
    encoding: 'utf8',
    env: npmEnv(),
    // A hung npm would block this worker (a sync call outlives the test timeout): cap it.
    timeout: 300_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

const dir = tempDir('cas-pack-');
afterAll(() => dir.cleanup());

describe('npm package', () => {
  it('ships the built CLI and its README, and nothing else', () => {
    const [pack] = JSON.parse(npm(['pack', '--dry-run', '--json'])) as Array<{
      files: Array<{ path: string }>;
    }>;
    const files = pack?.files.map((f) => f.path) ?? [];
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        // The Apache-2.0 text package.json names (it shipped without one, found by probing).
        'LICENSE',
        'bin/cas.js',
        'dist/cli/main.js',
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        // The embedded service's thread: its bundle and the code cache V8 starts it with.
        'dist/service/embedded-worker.bundle.cjs',
        'dist/service/embedded-worker.bundle.cache',
        // The CLI's bundle and its code cache (bin/cas.js runs it through dist/cli/launch.js).
        'dist/cli/main.bundle.cjs',
        'dist/cli/main.bundle.cache',
      ]),
    );
    for (const file of files) {
      expect(file).toMatch(
        /^(package\.json|README\.md|LICENSE|bin\/cas\.js|dist\/.+\.(js|d\.ts|json)|dist\/(service\/embedded-worker|cli\/main)\.bundle\.(cjs|cache))$/,
      );
      expect(file).not.toMatch(/\.test\.js$|^dist\/sea\/|^dist\/cas-/);
    }
  });

  it('runs with npx from the packed tarball, embedded service included', () => {
    const tarball = npm(['pack', '--pack-destination', dir.path]).trim().split('\n').pop() ?? '';
    const app = join(dir.path, 'app');
    execFileSync('mkdir', ['-p', app]);
    npm(['install', '--prefix', app, join(dir.path, tarball)]);
    const run = (args: string[]) =>
      execFileSync('npx', ['--no-install', 'cas', ...args], {
        cwd: app,
        encoding: 'utf8',
        timeout: 60_000,
        env: cleanEnv({ CAS_DATA_DIR: join(dir.path, 'data') }),
      });
    expect(run(['--version']).trim()).toBe(VERSION);
    expect(JSON.parse(run(['identify', '--id', 'packed', '--json']))).toMatchObject({ id: 'packed' });
    // The library, as an app imports it by the package's name (both entries of `exports`).
    const script = `import { Client } from 'cas'; import { Client as C2 } from 'cas/client';
      console.log(typeof Client, Client === C2);`;
    const imported = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: app,
      encoding: 'utf8',
      timeout: 60_000,
      env: cleanEnv(),
    });
    expect(imported.trim()).toBe('function true');
    // And from CommonJS, which Node 20.19 and later load ESM for (require(esm)): the package's
    // exports offered \`import\` only, so require('cas') failed with "No exports main defined".
    const required = execFileSync(
      process.execPath,
      [
        '-e',
        "const { Client } = require('cas'); console.log(typeof Client, require('cas/client').Client === Client)",
      ],
      { cwd: app, encoding: 'utf8', timeout: 60_000, env: cleanEnv() },
    );
    expect(required.trim()).toBe('function true');
  }, 180_000);
});
