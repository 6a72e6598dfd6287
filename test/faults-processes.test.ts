import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './helpers/cli.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * A test that starts a process never leaves it running (issue 15: under load a test timed out and its
 * `cas serve` ran on for 25 minutes after its directory was deleted). A fixture test, in a vitest of
 * its own, starts a real `cas serve` through the shared helpers and then times out, or dies with
 * SIGKILL; once that vitest has exited, the server must be gone.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = tempDir('cas-faults-processes-');
afterAll(() => dir.cleanup());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runFixture(
  mode: 'timeout' | 'crash',
): Promise<{ code: number | null; pid: number; output: string }> {
  const pidFile = join(dir.path, `${mode}.pid`);
  const child = spawnTracked(
    process.execPath,
    [
      join(root, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      'test/helpers/fixtures/vitest.config.ts',
    ],
    {
      cwd: root,
      env: cleanEnv({ LEAK_MODE: mode, LEAK_PID_FILE: pidFile, LEAK_DATA_DIR: join(dir.path, mode) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(existsSync(pidFile), output).toBe(true);
  return { code, pid: Number(readFileSync(pidFile, 'utf8')), output };
}

/** The kernel delivers the kill at once, but the process may take a moment to be reaped. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return !alive(pid);
}

describe('processes started by tests', () => {
  it('are killed when their test times out (afterAll of the helpers)', async () => {
    const { code, pid, output } = await runFixture('timeout');
    expect(code, output).not.toBe(0);
    expect(output).toMatch(/Test timed out in 500ms/);
    expect(await gone(pid)).toBe(true);
  }, 90_000);

  it.skipIf(process.platform !== 'linux' || !existsSync('/usr/bin/setpriv'))(
    'are killed when the test worker itself dies with SIGKILL (parent-death signal)',
    async () => {
      const { code, pid, output } = await runFixture('crash');
      expect(code, output).not.toBe(0);
      expect(await gone(pid)).toBe(true);
    },
    90_000,
  );
});
