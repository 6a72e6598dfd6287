import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userRecordSchema } from '../src/shared/users.js';
import { VERSION } from '../src/shared/version.js';
import { CAS_BIN, cleanEnv, runCli, startServe, stopChild } from './helpers/cli.js';
import { FIXTURES } from './helpers/import.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

const dirs: Array<{ cleanup: () => void }> = [];
function dataDir(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir.path;
}
afterAll(() => {
  for (const dir of dirs) dir.cleanup();
});

describe('cas identify / alias against `cas serve`', () => {
  let serve: Awaited<ReturnType<typeof startServe>>;
  let dir: string;
  beforeAll(async () => {
    dir = dataDir();
    serve = await startServe(['--data-dir', dir, '--api-key', 'K', '--project', 'P1']);
  });
  afterAll(async () => {
    expect(await stopChild(serve.child)).toBe(0);
    // A clean stop removes the announcement so later CLI runs do not chase a dead server.
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
  });

  const remote = () => ['--endpoint', serve.info.url, '--api-key', 'K', '--project', 'P1'];

  it('announces url, key, project and data dir as one JSON line', () => {
    expect(serve.info).toMatchObject({ api_key: 'K', project_id: 'P1', data_dir: dir });
    expect(serve.info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('identifies, merges traits, and aliases through the CLI', async () => {
    const first = await runCli(['identify', ...remote(), '--id', 'u1', '--trait', 'plan=pro', '--json']);
    expect(first.code).toBe(0);
    expect(userRecordSchema.parse(JSON.parse(first.stdout))).toMatchObject({
      id: 'u1',
      traits: { plan: 'pro' },
    });

    const second = await runCli(['identify', ...remote(), '--id', 'u1', '--trait', 'seats=3']);
    expect(JSON.parse(second.stdout)).toMatchObject({ traits: { plan: 'pro', seats: 3 } });

    const aliased = await runCli(['alias', ...remote(), '--id', 'u1-new', '--previous', 'u1']);
    expect(aliased.code).toBe(0);
    expect(JSON.parse(aliased.stdout)).toMatchObject({ id: 'u1-new', aliases: ['u1', 'u1-new'] });
  });

  it('maps service refusals to exit codes with one-line messages', async () => {
    const badKey = await runCli([
      'identify',
      '--endpoint',
      serve.info.url,
      '--api-key',
      'nope',
      '--project',
      'P1',
      '--id',
      'x',
    ]);
    expect(badKey.code).toBe(3);
    expect(badKey.stderr.trim().split('\n')[0]).toMatch(/403/);
    const missing = await runCli(['alias', ...remote(), '--id', 'a', '--previous', 'ghost']);
    expect(missing.code).toBe(4);
    const noId = await runCli(['identify', ...remote()]);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/--id/);
  });

  it('finds the running server through the data directory instead of failing on the lock', async () => {
    const local = await runCli(['identify', '--id', 'via-dir', '--json'], { env: { CAS_DATA_DIR: dir } });
    expect(local.code).toBe(0);
    expect(JSON.parse(local.stdout)).toMatchObject({ id: 'via-dir' });
  });

  // Found by probing: it waited 10 s, then "in use by another process", the server unnamed.
  it('a second cas serve of the directory names the one serving it, at once (exit 5)', async () => {
    const second = await runCli(['serve', '--port', '0', '--data-dir', dir], { timeoutMs: 30_000 });
    expect(second.code, second.stderr).toBe(5);
    expect(second.stderr).toContain(`served already, by the cas serve at ${serve.info.url}`);
    expect(second.ms).toBeLessThan(8_000);
  });
});

describe('the embedded default', () => {
  it('works with no server and no endpoint, and keeps data between runs', async () => {
    const env = { CAS_DATA_DIR: dataDir() };
    const first = await runCli(['identify', '--id', 'u1', '--trait', 'plan=pro', '--json'], { env });
    expect(first.code).toBe(0);
    const second = await runCli(['identify', '--id', 'u1', '--trait', 'seats=3', '--json'], { env });
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ id: 'u1', traits: { plan: 'pro', seats: 3 } });
  });

  // A new project hid every stored event and user, exit 0 (found by probing): the key is remade for
  // the project the store has.
  it.each([
    ['removed', null],
    ['emptied', ''],
    ['without its project', '{"api_key":"cas_x"}'],
    // Another store's file, as when a backed-up database is put into a directory already set up.
    ['naming a project the store lacks', '{"api_key":"cas_other","project_id":"local_0ther000"}'],
  ])('credentials.json %s: the stored project is kept, under a new key', async (_what, content) => {
    const dir = dataDir();
    const env = { CAS_DATA_DIR: dir };
    expect((await runCli(['identify', '--id', 'kept', '--json'], { env })).code).toBe(0);
    const path = join(dir, 'credentials.json');
    const before = JSON.parse(readFileSync(path, 'utf8')) as { api_key: string; project_id: string };
    if (content === null) rmSync(path);
    else writeFileSync(path, content);
    const listed = await runCli(['users', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('"kept"');
    expect(listed.stderr).toContain(`a new local key was made for the stored project ${before.project_id}`);
    const after = JSON.parse(readFileSync(path, 'utf8')) as { api_key: string; project_id: string };
    expect(after.project_id).toBe(before.project_id);
    expect(after.api_key).not.toBe(before.api_key);
    // Said once: the next command finds the file whole.
    const again = await runCli(['users', 'list', '--json'], { env });
    expect(again.stderr).not.toContain('credentials.json');
  });

  it('a data directory that is a file is a usage error saying so (it was "this is a bug": ENOTDIR)', async () => {
    const file = join(dataDir(), 'a-file');
    writeFileSync(file, 'not a directory');
    const run = await runCli(['identify', '--id', 'u1', '--data-dir', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`the data directory "${file}" is a file, not a directory`);
    expect(run.stderr).not.toMatch(/bug|ENOTDIR/);
  });

  // Each failed deep inside as "this is a bug" with a raw system error (found by probing).
  it.each([
    ['imports', 'file', 'a file, where cas keeps a folder'],
    ['credentials.json', 'folder', 'a folder, where cas keeps a file'],
    ['server.json', 'folder', 'a folder, where cas keeps a file'],
  ])('a data directory whose %s is a %s is a usage error naming it', async (name, kind, said) => {
    const dir = dataDir();
    const path = join(dir, name);
    if (kind === 'file') writeFileSync(path, '');
    else mkdirSync(path);
    for (const args of [
      ['identify', '--id', 'u1'],
      ['import', join(FIXTURES, 'events.jsonl')],
    ]) {
      const run = await runCli([...args, '--data-dir', dir]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${path} is ${said}`);
      expect(run.stderr).not.toMatch(/bug|EEXIST|EISDIR/);
    }
  });

  it('a data directory under a file, a link to nothing, or under /proc is a usage error too', async () => {
    const file = join(dataDir(), 'b-file');
    writeFileSync(file, 'not a directory');
    const link = join(dataDir(), 'dangling');
    symlinkSync(join(dataDir(), 'not-there', 'x'), link);
    // Each was "this is a bug", exit 1 (found by probing).
    const base = dataDir();
    const loop = join(base, 'loop-a');
    symlinkSync(join(base, 'loop-b'), loop);
    symlinkSync(loop, join(base, 'loop-b'));
    for (const [dir, said] of [
      [join(file, 'sub'), 'is under a file, not a directory'],
      [link, 'which is not there'],
      [loop, 'its symbolic links form a loop'],
      [join(dataDir(), 'n'.repeat(300)), 'a name in the path is too long'],
      // Node's recursive mkdir never returns there: the command spun until killed.
      ['/proc/cas-test', 'is under /proc'],
    ] as const) {
      const run = await runCli(['identify', '--id', 'u1', '--data-dir', dir], { timeoutMs: 20_000 });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(said);
      expect(run.stderr).not.toMatch(/bug|ENOTDIR|ENOENT|ELOOP|ENAMETOOLONG/);
    }
    const serve = await runCli(['serve', '--port', '0', '--data-dir', '/proc/cas-test'], {
      timeoutMs: 20_000,
    });
    expect(serve.code, serve.stderr).toBe(2);
  });
});

describe('retries through a misbehaving server', () => {
  let server: Server;
  let url: string;
  let hits = 0;
  let writes = 0;
  let mode: 'flaky' | 'down' | 'writes-down' = 'flaky';
  const record = {
    organization_id: 'o',
    app_id: 'p',
    user_id: 'u_1',
    id: 'u1',
    aliases: ['u1'],
    created_at: '2025-01-01T00:00:00.000Z',
    traits: {},
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits += 1;
      req.resume();
      if (mode === 'writes-down' && req.method === 'GET') {
        const key = { organization_id: 'o', apikey: 'kid', key_id: 'kid', created_at: record.created_at };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify([{ ...key, label: null, current: true }]));
      } else if (mode === 'writes-down') {
        writes += 1;
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream maintenance');
      } else if (mode === 'down') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream maintenance');
      } else if (hits <= 2) {
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('slow down');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(record));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('waits out Retry-After twice and then succeeds (about two seconds)', async () => {
    hits = 0;
    mode = 'flaky';
    const result = await runCli([
      'identify',
      '--endpoint',
      url,
      '--api-key',
      'k',
      '--project',
      'p',
      '--id',
      'u1',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(hits).toBe(3);
    expect(result.ms).toBeGreaterThanOrEqual(1900);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 'u1' });
  });

  it('exits 5 with a one-line message when the server stays unavailable', async () => {
    hits = 0;
    mode = 'down';
    const result = await runCli([
      'identify',
      '--endpoint',
      url,
      '--api-key',
      'k',
      '--project',
      'p',
      '--id',
      'u1',
      '--retries',
      '3',
    ]);
    expect(result.code).toBe(5);
    expect(hits).toBe(3);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/503.*upstream maintenance/);
  });

  // Tried again after an answer was lost, a rotation revoked the key the retry authenticated with:
  // 403, and the new key's secret was never shown (found by probing).
  it('sends a key rotation, a new key or intent once when the failure may follow the write, and says so', async () => {
    mode = 'writes-down';
    const remote = ['--endpoint', url, '--api-key', 'k', '--project', 'p', '--retries', '3'];
    for (const args of [
      ['keys', 'create', '--rotate', 'kid', '--label', 'next'],
      ['keys', 'create', '--label', 'another'],
      ['intents', 'add', 'refund', '--description', 'asks for money back'],
    ]) {
      writes = 0;
      const result = await runCli([...args, ...remote]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(5);
      expect(writes, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(/hint: the service may have carried it out .* check \(cas keys list/);
    }
  });
});

describe('help, version and usage errors', () => {
  it('prints the version', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('shows examples in every command help', async () => {
    for (const args of [['--help'], ['identify', '--help'], ['alias', '--help'], ['serve', '--help']]) {
      const result = await runCli(args);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Examples:\n\s+\$ cas /);
    }
  });

  it('stops quietly when the reader of stdout goes away (cas ... | head -1)', async () => {
    const fixture = fileURLToPath(new URL('../fixtures/events.jsonl', import.meta.url));
    const child = spawnTracked(process.execPath, [CAS_BIN, 'import', fixture, '--dry-run', '--json'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|Error/);
  });

  // Found by probing: `cas help chrat` printed nothing and exited 2.
  it('help of an unknown command names it and the nearest one, at the top and in a group', async () => {
    const top = await runCli(['help', 'chrat']);
    expect(top.code).toBe(2);
    expect(top.stderr).toContain("unknown command 'chrat'");
    expect(top.stderr).toContain('Did you mean chart?');
    const group = await runCli(['users', 'help', 'lst']);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain("unknown command 'lst'");
    const known = await runCli(['help', 'alias']);
    expect(known.code).toBe(0);
    expect(known.stdout).toContain('Usage: cas alias');
  });

  it('exits 2 naming an unknown flag', async () => {
    const result = await runCli(['identify', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("'--bogus'");
  });
});
