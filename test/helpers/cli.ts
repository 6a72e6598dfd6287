import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnTracked } from './processes.js';

export const CAS_BIN = fileURLToPath(new URL('../../bin/cas.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Environment with every variable that could point the CLI elsewhere removed. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(CAS_|MLSDK_|XDG_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1', XDG_CONFIG_HOME: '/nonexistent-cas-config', ...extra };
}

/** `cleanEnv` plus the extra CA certificates vitest.config.ts set aside, for npm reaching the registry. */
export function npmEnv(): NodeJS.ProcessEnv {
  const ca = process.env.CAS_TEST_NODE_EXTRA_CA_CERTS;
  return cleanEnv(ca === undefined ? {} : { NODE_EXTRA_CA_CERTS: ca });
}

/**
 * Runs the built CLI (bin/cas.js → dist/) as a child process, like a user's shell would. A run that
 * outlives `timeoutMs` is killed (its result then has code null and says so on stderr); without one,
 * a run cut short by its test's timeout is killed by processes.ts's `afterAll`.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; input?: string | Buffer; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const child = spawnTracked(process.execPath, [CAS_BIN, ...args], {
      env: cleanEnv(options.env),
      stdio: 'pipe',
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    const limit = options.timeoutMs;
    const timer =
      limit === undefined
        ? undefined
        : setTimeout(() => {
            stderr += `\n[test] killed after ${limit} ms`;
            child.kill('SIGKILL');
          }, limit);
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin?.end(options.input ?? '');
  });
}

/** Starts `cas serve ... --json` and resolves with the line it prints once listening. */
export function startServe(
  args: string[],
  env: Record<string, string> = {},
): Promise<{
  child: ChildProcess;
  info: { url: string; api_key: string; project_id: string; data_dir: string; ws_url?: string };
}> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(process.execPath, [CAS_BIN, 'serve', '--port', '0', '--json', ...args], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n') && line) resolve({ child, info: JSON.parse(line) });
    });
    child.on('exit', (code) => reject(new Error(`cas serve exited ${code}: ${stderr}`)));
  });
}

/**
 * Stops a child and resolves with its exit code (null when a signal ended it). A child that ignores
 * the signal for `graceMs` is killed: a stop in a `finally` must end, whatever state the child is in.
 */
export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 30_000,
): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    const timer = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill(signal);
  });
}
