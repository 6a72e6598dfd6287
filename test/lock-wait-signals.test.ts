import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv } from './helpers/cli.js';
import { holdDataDir } from './helpers/lock-holder.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * A command waiting for a data directory another process holds (up to 10 s, connect.ts) stops when
 * interrupted: it waited the rest out and then exited 5, "in use by another process" (found by
 * probing), `cas import` and `cas serve` alike.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(ROOT, 'fixtures', 'turns.csv');
const dir = tempDir('cas-lock-wait-');
afterAll(() => dir.cleanup());

async function interruptedWhileWaiting(args: string[], signal: NodeJS.Signals) {
  const data = join(dir.path, `${args[0]}-${signal}`);
  const holder = await holdDataDir(data);
  try {
    const child = spawnTracked(process.execPath, [CAS_BIN, ...args, '--data-dir', data], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const exited = once(child, 'close') as Promise<[number | null]>;
    // Well inside the 10 s wait, whenever the command got to it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const sent = Date.now();
    child.kill(signal);
    const [code] = await exited;
    return { code, stderr, afterSignalMs: Date.now() - sent };
  } finally {
    holder.kill('SIGKILL');
  }
}

describe('interrupted while waiting for the data directory', () => {
  it('cas import stops at once, exit 130', { timeout: 30_000 }, async () => {
    const run = await interruptedWhileWaiting(['import', FIXTURE, '--json'], 'SIGINT');
    expect(run.code, run.stderr).toBe(130);
    expect(run.afterSignalMs).toBeLessThan(5_000);
    expect(run.stderr).not.toMatch(/in use by another process/);
  });

  it('cas serve stops at once, exit 130', { timeout: 30_000 }, async () => {
    const run = await interruptedWhileWaiting(['serve', '--port', '0'], 'SIGTERM');
    expect(run.code, run.stderr).toBe(130);
    expect(run.afterSignalMs).toBeLessThan(5_000);
    expect(run.stderr).not.toMatch(/in use by another process/);
  });
});
