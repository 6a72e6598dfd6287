import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv, stopChild } from './helpers/cli.js';
import { SHARED_DATA } from './helpers/import.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * The README and every command's `--help` examples are true, and stay true (issue 15): each shell
 * command runs, in order, as a new user would paste it, with `cas` being the built CLI, over a fresh
 * data directory. A command must exit 0 unless the README announces otherwise with a trailing
 * comment holding `(exit N)`. Read at run time, so lines others add are checked too. A `--help` example
 * that is also a line of the README (the same command and exit) runs once, in the README's run.
 *
 * Not run (the allow-list, by pattern): `npm ...` (installing, building and testing this project
 * happen outside this test; `npm test` would run itself), blocks that talk to a remote service
 * (`https://`, the hosted `MLSDK_*` variables), and the single-file binary (`cas-linux-x64`,
 * /opt/cas: built and run by test/binary.test.ts). `cas serve` runs until stopped: it is started
 * (on a free port: `--port 0` is appended, and commander takes the last value), must say it
 * listens, and must stop cleanly on SIGTERM.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP_LINE = /^npm\s|\bcas-linux-x64\b|\/opt\/cas\b/;
const SKIP_BLOCK = /https:\/\/|\bMLSDK_/;
const ANNOUNCED = /#.*\(exit (\d+)\)\s*$/;
const PER_COMMAND_MS = 120_000;

const dir = tempDir('cas-readme-');
afterAll(() => dir.cleanup());

interface Example {
  /** Where it comes from, for failure messages: `README.md:42` or `cas chart --help`. */
  source: string;
  command: string;
  /** Exit code announced by the text, 0 otherwise. */
  expect: number;
}

/** The commands of the README's ```sh blocks, continuation lines joined, comment lines dropped. */
function readmeCommands(text: string): Example[] {
  const out: Example[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i] ?? '')) continue;
    const block: Example[] = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j] ?? '').startsWith('```'); j++) {
      const start = j;
      let command = lines[j] ?? '';
      while (command.endsWith('\\') && j + 1 < lines.length)
        command = `${command.slice(0, -1)} ${lines[++j]}`;
      const trimmed = command.trim();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const announced = ANNOUNCED.exec(trimmed);
      block.push({
        source: `README.md:${start + 1}`,
        command: trimmed,
        expect: announced ? Number(announced[1]) : 0,
      });
    }
    i = j;
    if (block.some((e) => SKIP_BLOCK.test(e.command))) continue;
    out.push(...block.filter((e) => !SKIP_LINE.test(e.command)));
  }
  return out;
}

/** The `$ cas ...` lines under "Examples:" in the help of the root command and each (sub)command. */
async function helpExamples(): Promise<Example[]> {
  // Asynchronous: ~30 synchronous runs held this worker's event loop for seconds, stalling the
  // README's run beside this one.
  const help = async (args: string[]) =>
    (await capture(process.execPath, [CAS_BIN, ...args, '--help'], {})).stdout;
  const commands = (text: string) =>
    [...(text.split(/^Commands:$/m)[1] ?? '').matchAll(/^ {2}([a-z][\w-]*)/gm)]
      .map((m) => m[1] ?? '')
      .filter((name) => name !== 'help');
  const out: Example[] = [];
  const seen = new Set<string>();
  const visit = async (path: string[]): Promise<void> => {
    const text = await help(path);
    for (const m of (text.split(/^Examples:$/m)[1] ?? '').matchAll(/^\s+\$ (cas .*)$/gm)) {
      const command = (m[1] ?? '').trim();
      if (seen.has(command)) continue;
      seen.add(command);
      const announced = ANNOUNCED.exec(command);
      out.push({
        source: `cas ${path.join(' ')} --help`.replace('  ', ' '),
        command,
        expect: announced ? Number(announced[1]) : 0,
      });
    }
    for (const sub of commands(text)) await visit([...path, sub]);
  };
  await visit([]);
  return out.filter((e) => !SKIP_LINE.test(e.command) && !SKIP_BLOCK.test(e.command));
}

/** A command line as run: its trailing comment and runs of spaces do not count. */
const sameLine = (e: Example): string =>
  `${e.expect} ${e.command
    .replace(/\s#.*$/, '')
    .replace(/\s+/g, ' ')
    .trim()}`;

/**
 * A fresh place to run in: a working directory with `fixtures/` (as in a checkout) and, beside it,
 * `../shared/data` (the real data sets the README imports, where this checkout has them).
 */
function sandbox(name: string): { cwd: string; env: Record<string, string> } {
  const base = join(dir.path, name);
  const cwd = join(base, 'work');
  mkdirSync(cwd, { recursive: true });
  symlinkSync(join(ROOT, 'fixtures'), join(cwd, 'fixtures'));
  mkdirSync(join(base, 'shared'));
  symlinkSync(SHARED_DATA, join(base, 'shared', 'data'));
  const tmp = join(base, 'tmp');
  mkdirSync(tmp);
  return {
    cwd,
    env: {
      CAS_DATA_DIR: join(base, 'data'),
      XDG_CONFIG_HOME: join(base, 'config'),
      TMPDIR: tmp,
      HOME: base,
      CAS_BIN,
      NODE: process.execPath,
    },
  };
}

/** `cas` as the README means it: the built CLI (what `npm link` would put on the PATH). */
const PRELUDE = 'set -o pipefail; cas() { "$NODE" "$CAS_BIN" "$@"; };';

interface Ran {
  code: number | null;
  output: string;
  env: Record<string, string>;
}

function run(example: Example, cwd: string, env: Record<string, string>): Promise<Ran> {
  const serve = /^cas serve\b/.test(example.command);
  // `export` lines change the environment of the lines after them, as in a user's shell.
  const script = serve
    ? `${PRELUDE} exec ${example.command.replace(/\s#.*$/, '').replace(/^cas /, '"$NODE" "$CAS_BIN" ')} --port 0`
    : `${PRELUDE} ${example.command}\nrc=$?; env -0 > "$ENV_DUMP"; exit $rc`;
  const dump = join(dir.path, `env-${Math.random().toString(36).slice(2)}`);
  const child = spawnTracked('bash', ['-c', script], {
    cwd,
    env: cleanEnv({ ...env, ENV_DUMP: dump }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), PER_COMMAND_MS);
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve)).finally(() =>
    clearTimeout(timer),
  );
  if (serve) return runServe(child, exited, () => output, env);
  return exited.then((code) => ({ code, output, env: code === 0 ? readEnv(dump, env) : env }));
}

/** A `cas serve` line passes when it says it listens and then stops cleanly on SIGTERM. */
async function runServe(
  child: ChildProcess,
  exited: Promise<number | null>,
  output: () => string,
  env: Record<string, string>,
): Promise<Ran> {
  for (;;) {
    if (/listening on|"url":/.test(output())) break;
    if (child.exitCode !== null || child.signalCode !== null)
      return { code: await exited, output: output(), env };
    await new Promise((r) => setTimeout(r, 50));
  }
  const code = await stopChild(child);
  return { code, output: output(), env };
}

function readEnv(path: string, before: Record<string, string>): Record<string, string> {
  try {
    const vars = readFileSync(path, 'utf8').split('\0');
    const after: Record<string, string> = { ...before };
    for (const entry of vars) {
      const eq = entry.indexOf('=');
      const key = entry.slice(0, eq);
      if (eq > 0 && /^(CAS_|MLSDK_|XDG_)/.test(key)) after[key] = entry.slice(eq + 1);
    }
    return after;
  } catch {
    return before;
  }
}

function capture(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnTracked(command, args, { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

async function runAll(examples: Example[], name: string): Promise<string[]> {
  const { cwd, env: start } = sandbox(name);
  let env = start;
  const failures: string[] = [];
  for (const example of examples) {
    const result = await run(example, cwd, env);
    env = result.env;
    if (result.code !== example.expect) {
      const tail = result.output.trim().split('\n').slice(-4).join('\n    ');
      failures.push(
        `${example.source}: \`${example.command}\` exited ${result.code}, expected ${example.expect}\n    ${tail}`,
      );
    }
  }
  return failures;
}

describe('the README, tried as a new user would', () => {
  it('parses its shell blocks (the allow-list leaves the tour and the command examples in)', () => {
    const commands = readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(commands.some((e) => e.command.startsWith('cas import fixtures/'))).toBe(true);
    expect(commands.some((e) => e.command.startsWith('cas chart retention'))).toBe(true);
    expect(commands.some((e) => e.command.startsWith('cas serve'))).toBe(true);
    expect(commands.filter((e) => /^npm |https:/.test(e.command))).toEqual([]);
  });

  // The three run side by side (separate sandboxes): most of their time is CLI start-up, which two cores share.
  it.concurrent('runs every command of its shell blocks, in order, over one fresh data directory', async ({
    expect,
  }) => {
    const commands = readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(await runAll(commands, 'readme')).toEqual([]);
  }, 600_000);

  it.concurrent("runs every command's --help examples, in order, over another fresh data directory", async ({
    expect,
  }) => {
    // A line the README's run already runs (same command, same announced exit) is not run twice:
    // a fifth of the examples, a third of this test's time (the data imports above all).
    const readme = new Set(
      readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((e) => sameLine(e)),
    );
    const all = await helpExamples();
    const examples = all.filter((e) => !readme.has(sameLine(e)));
    expect(examples.length).toBeGreaterThan(10);
    expect(await runAll(examples, 'help')).toEqual([]);
  }, 600_000);

  it.concurrent('prints the demo commands so that each can be pasted into a shell', async ({ expect }) => {
    const demo = await capture(process.execPath, [join(ROOT, 'scripts', 'demo.mjs')], { TMPDIR: dir.path });
    expect(demo.code, demo.stderr).toBe(0);
    const printed = [...demo.stderr.matchAll(/^\$ (.*)$/gm)].map((m) => m[1] ?? '');
    expect(printed[0]).toMatch(/^export CAS_DATA_DIR=/);
    expect(printed.filter((line) => line.startsWith('cas chart'))).toHaveLength(4);
    // Pasted as printed: the export, then every chart (the import was already done).
    const pasted = [printed[0], ...printed.filter((line) => line.startsWith('cas chart'))].join('\n');
    const replay = await capture('bash', ['-c', `set -e\n${PRELUDE}\n${pasted}`], {
      NODE: process.execPath,
      CAS_BIN,
    });
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).not.toMatch(/too many arguments/);
  }, 300_000);
});
