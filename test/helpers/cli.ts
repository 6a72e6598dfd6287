import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

/** Runs the built CLI (bin/cas.js → dist/) as a child process, like a user's shell would. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CAS_BIN, ...args], { env: cleanEnv(options.env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
    child.stdin.end(options.input ?? '');
  });
}

/** Starts `cas serve ... --json` and resolves with the line it prints once listening. */
export function startServe(
  args: string[],
  env: Record<string, string> = {},
): Promise<{
  child: ChildProcess;
  info: { url: string; api_key: string; project_id: string; data_dir: string };
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CAS_BIN, 'serve', '--port', '0', '--json', ...args], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n') && line) resolve({ child, info: JSON.parse(line) });
    });
    child.on('exit', (code) => reject(new Error(`cas serve exited ${code}: ${stderr}`)));
  });
}

export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}
