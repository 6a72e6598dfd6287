import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Every process a test starts ends with the test file, whatever happens to the test. Three nets:
 * - `afterAll` of every test file (setup.ts) kills what is still running: it runs after a test that
 *   timed out, whose own `finally` may never run (its awaited promise never settles);
 * - `process.on('exit')` kills them if the test worker exits normally before that;
 * - on Linux, `setpriv --pdeathsig KILL` makes the kernel kill the child when the worker dies in a way
 *   no handler sees (SIGKILL, a crash): once, a `cas serve` ran on for 25 minutes after its test
 *   timed out and its directory was deleted.
 */
const live = new Set<ChildProcess>();

const SETPRIV = '/usr/bin/setpriv';
const parentDeathSignal = process.platform === 'linux' && existsSync(SETPRIV);

/**
 * `spawn`, with the child registered for clean-up (and killed by the kernel if this process dies).
 * Typed as `spawn` itself, so a call site keeps the stream types its stdio option gives it.
 */
export const spawnTracked = ((command: string, args: readonly string[] = [], options: SpawnOptions = {}) => {
  const child = parentDeathSignal
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options)
    : spawn(command, args, options);
  live.add(child);
  child.once('exit', () => live.delete(child));
  // A child that could not start (ENOENT) emits 'error' and never 'exit'.
  child.once('error', () => live.delete(child));
  return child;
}) as typeof spawn;

/** Children started through `spawnTracked` and still running. */
export function runningChildren(): ChildProcess[] {
  return [...live].filter((child) => child.exitCode === null && child.signalCode === null);
}

/** Kills every tracked child still running and waits until each has exited. */
export async function killAllChildren(): Promise<void> {
  await Promise.all(
    runningChildren().map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          if (!child.kill('SIGKILL')) resolve();
        }),
    ),
  );
}

process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});
