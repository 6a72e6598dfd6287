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

const WAITING = 'another cas command is using it (up to 10 s)';

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
    // Inside the 10 s wait: the command says so once it has waited a second.
    for (let i = 0; i < 80 && !stderr.includes(WAITING); i++) await new Promise((r) => setTimeout(r, 100));
    const sent = Date.now();
    child.kill(signal);
    const [code] = await exited;
    return { code, stderr, afterSignalMs: Date.now() - sent };
  } finally {
    holder.kill('SIGKILL');
  }
}

// Up to 10 s of waiting said nothing and looked like a hang (probe: a second import beside a first).
describe('waiting for the data directory', () => {
  it('says so once, then imports when the directory is free', { timeout: 30_000 }, async () => {
    const data = join(dir.path, 'said');
    const holder = await holdDataDir(data);
    try {
      const child = spawnTracked(
        process.execPath,
        [CAS_BIN, 'import', FIXTURE, '--json', '--data-dir', data],
        {
          env: cleanEnv(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = once(child, 'close') as Promise<[number | null]>;
      const note = `cas: waiting for ${data}: another cas command is using it (up to 10 s)`;
      for (let i = 0; i < 80 && !stderr.includes(note); i++) await new Promise((r) => setTimeout(r, 100));
      expect(stderr).toContain(note);
      holder.kill('SIGKILL');
      await once(holder, 'exit');
      const [code] = await exited;
      expect(code, stderr).toBe(0);
      expect(stderr.split(note)).toHaveLength(2);
      expect(JSON.parse(stdout)).toMatchObject({ records: 156, rejected: 0 });
    } finally {
      holder.kill('SIGKILL');
    }
  });
});

describe('interrupted while waiting for the data directory', () => {
  it('cas import stops at once, exit 130', { timeout: 30_000 }, async () => {
    const run = await interruptedWhileWaiting(['import', FIXTURE, '--json'], 'SIGINT');
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain(`cas: waiting for ${join(dir.path, 'import-SIGINT')}: ${WAITING}`);
    expect(run.afterSignalMs).toBeLessThan(5_000);
    expect(run.stderr).not.toMatch(/in use by another process/);
  });

  it('cas serve stops at once, exit 130', { timeout: 30_000 }, async () => {
    const run = await interruptedWhileWaiting(['serve', '--port', '0'], 'SIGTERM');
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain(`waiting for ${join(dir.path, 'serve-SIGTERM')}: ${WAITING}`);
    expect(run.afterSignalMs).toBeLessThan(5_000);
    expect(run.stderr).not.toMatch(/in use by another process/);
  });
});
