import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * `npm run build` bundles the CLI into one file (scripts/bundle-cli.mjs) and records V8's code cache
 * of it, and bin/cas.js runs that file (cli/launch.ts). Every CLI test drives the bundle, so what it
 * does is tested there; a cache V8 refuses fails nothing, it only slows every command down, so this
 * says whether V8 takes it as the CLI loads it.
 */
const url = (path: string) => new URL(`../dist/${path}`, import.meta.url).href;
const dir = tempDir('cas-cli-bundle-');
afterAll(() => dir.cleanup());

describe('the bundled CLI', () => {
  it('is built beside the entry it bundles, in strict mode as its ES modules were written', () => {
    const bundle = fileURLToPath(url('cli/main.bundle.cjs'));
    expect(existsSync(bundle)).toBe(true);
    // The directive must come first to count: anything before it leaves the whole bundle sloppy.
    expect(readFileSync(bundle, 'utf8').slice(0, 13)).toBe('"use strict";');
  });

  it("compiles with the build's code cache under the CLI's V8 flags", () => {
    const script = `
      const { applyV8Flags } = await import(${JSON.stringify(url('shared/v8-flags.js'))});
      const { bundleScript } = await import(${JSON.stringify(url('shared/bundle-script.js'))});
      const { fileURLToPath } = await import('node:url');
      applyV8Flags();
      const path = (p) => fileURLToPath(new URL(p, ${JSON.stringify(url('cli/'))}));
      console.log(bundleScript(path('main.bundle.cjs'), path('main.bundle.cache')).codeCache);`;
    const file = join(dir.path, 'code-cache.mjs');
    writeFileSync(file, script);
    const run = spawnSync(process.execPath, [file], { env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('accepted');
  });
});
