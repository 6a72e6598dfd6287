import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleIsCurrent, bundleScript } from './bundle-script.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-bundle-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string, seconds?: number): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  if (seconds !== undefined) utimesSync(path, seconds, seconds);
  return path;
}

describe('bundleIsCurrent', () => {
  it('takes a bundle made after its source, or at the same time (as npm packs them), and not one before', () => {
    const source = file('main.js', '', 1_000_000);
    expect(bundleIsCurrent(file('newer.cjs', '', 1_000_001), source)).toBe(true);
    expect(bundleIsCurrent(file('same.cjs', '', 1_000_000), source)).toBe(true);
    expect(bundleIsCurrent(file('older.cjs', '', 999_999), source)).toBe(false);
  });

  it('is false when either file is missing', () => {
    expect(bundleIsCurrent(join(dir, 'none.cjs'), file('m.js', ''))).toBe(false);
    expect(bundleIsCurrent(file('b.cjs', ''), join(dir, 'none.js'))).toBe(false);
  });
});

describe('bundleScript', () => {
  it('runs the bundle as a CommonJS module beside it, and records a cache V8 then takes', () => {
    const bundle = file(
      'run.cjs',
      "module.exports.seen = require('node:path').basename(__filename); globalThis.__casRan = module.exports.seen;",
    );
    const cache = join(dir, 'run.cache');
    const first = bundleScript(bundle, cache);
    expect(first.codeCache).toBe('absent');
    first.run();
    const g = globalThis as { __casRan?: string };
    expect(g.__casRan).toBe('run.cjs');
    delete g.__casRan;
    expect(first.recordCodeCache()).toBeGreaterThan(0);
    expect(bundleScript(bundle, cache).codeCache).toBe('accepted');
    // Another text under the same name: V8 refuses the cache, and the script still compiles.
    writeFileSync(bundle, `${'/* changed */'}module.exports = 1;`);
    expect(bundleScript(bundle, cache).codeCache).toBe('rejected');
  });
});
