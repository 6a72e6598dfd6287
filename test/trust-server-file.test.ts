import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, copyFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect as connectSocket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirIdentity, randomToken, serverProof } from '../src/service/server-identity.js';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15 item 4: a `server.json` left behind must not hand the local key to whoever now listens on
 * its port. A real local HTTP server plays the stranger on the port a planted `server.json` names,
 * with a live pid (this test's own); the built CLI must send it nothing but a health challenge, say
 * why it ignored the file, remove it, and run the command on its embedded service instead.
 */

const KEY = `k_planted_${randomToken()}`;

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  appId: string | undefined;
  body: string;
}

/** A stranger: records every request, answers /healthz as a lenient service would (no valid proof). */
function stranger(answer: (challenge: string) => Record<string, unknown>) {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        appId: req.headers['x-app-id'] as string | undefined,
        body,
      });
      const challenge = new URL(req.url ?? '/', 'http://x').searchParams.get('challenge') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer(challenge)));
    });
  });
  return {
    seen,
    async listen(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const dirs: Array<{ cleanup: () => void }> = [];
const strangers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.all(strangers.map((s) => s.close()));
  for (const dir of dirs) dir.cleanup();
});

/**
 * One data directory with local credentials for every stale-file case (its database is created once,
 * which is most of an embedded run's cost), and a planted server.json per case.
 */
let shared: string | undefined;
function plant(server: { url: string; pid: number; secret?: string }): string {
  if (shared === undefined) {
    const dir = tempDir();
    dirs.push(dir);
    shared = dir.path;
    const credentials = JSON.stringify({ api_key: KEY, project_id: 'local_p' });
    writeFileSync(join(shared, 'credentials.json'), credentials, { mode: 0o600 });
  }
  writeFileSync(join(shared, 'server.json'), JSON.stringify(server), { mode: 0o600 });
  return shared;
}

const identify = (dir: string) =>
  runCli(['identify', '--id', 'u1', '--trait', 'plan=pro', '--data-dir', dir, '--json']);

/** A pid that no process has any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('a stale server.json (issue 15 item 4)', () => {
  it.each([
    ['answers a plain health check', () => ({ status: 'ok', version: '0.1.0' })],
    ['echoes the challenge as its proof', (challenge: string) => ({ status: 'ok', proof: challenge })],
  ])(
    'a stranger that %s on the named port gets no key and no data; the CLI runs embedded',
    async (_name, answer) => {
      const fake = stranger(answer);
      strangers.push(fake);
      const url = await fake.listen();
      const dir = plant({ url, pid: process.pid, secret: randomToken() });

      const result = await identify(dir);
      expect(result.stderr).toContain('server.json');
      expect(result.stderr).toContain('could not prove it is the cas serve that wrote it');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ id: 'u1', traits: { plan: 'pro' } });

      // Only the challenge reached the stranger: no credentials, no project, no body, no other route.
      expect(fake.seen.length).toBeGreaterThan(0);
      for (const request of fake.seen) {
        expect(request.method).toBe('GET');
        expect(request.url).toMatch(/^\/healthz\?challenge=[0-9a-f]{64}$/);
        expect(request.authorization).toBeUndefined();
        expect(request.appId).toBeUndefined();
        expect(request.body).toBe('');
        expect(JSON.stringify(request)).not.toContain(KEY);
      }
      // Challenges are fresh: a recorded answer is worth nothing next time.
      expect(new Set(fake.seen.map((r) => r.url)).size).toBe(fake.seen.length);
      expect(existsSync(join(dir, 'server.json'))).toBe(false);
    },
  );

  it('a server.json from before proofs (no secret) is not trusted', async () => {
    const fake = stranger(() => ({ status: 'ok', version: '0.1.0' }));
    strangers.push(fake);
    const dir = plant({ url: await fake.listen(), pid: process.pid });
    const result = await identify(dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('no proof secret');
    expect(fake.seen).toEqual([]);
  });

  // Only root can give a file to another user; CI runs as root.
  it.runIf(process.getuid?.() === 0)(
    "another user's server.json gets nothing, even with a valid proof under the secret it chose",
    async () => {
      const secret = randomToken();
      let dir = '';
      const fake = stranger((challenge) => ({
        status: 'ok',
        proof: serverProof(secret, challenge, dataDirIdentity(dir)),
      }));
      strangers.push(fake);
      const url = await fake.listen();
      dir = plant({ url, pid: process.pid, secret });
      chownSync(join(dir, 'server.json'), 1234, 1234);
      const result = await runCli(['identify', '--id', 'u1', '--data-dir', dir, '--json'], {
        env: { CAS_API_KEY: 'victim-key' },
      });
      expect(result.stderr).toContain('belongs to user 1234, not to you');
      expect(fake.seen).toEqual([]);
      // Left for its owner: not ours to remove.
      expect(existsSync(join(dir, 'server.json'))).toBe(true);
      rmSync(join(dir, 'server.json'));
    },
  );

  it('a dead pid: the file is removed without contacting the port', async () => {
    const fake = stranger(() => ({ status: 'ok' }));
    strangers.push(fake);
    const dir = plant({ url: await fake.listen(), pid: deadPid(), secret: randomToken() });
    const result = await identify(dir);
    expect(result.code).toBe(0);
    expect(fake.seen).toEqual([]);
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
  });

  it('a non-loopback address is never contacted, whatever the pid', async () => {
    // 192.0.2.0/24 is TEST-NET-1: nothing answers there, so a connection attempt would also cost time.
    const dir = plant({ url: 'http://192.0.2.1:8787', pid: process.pid, secret: randomToken() });
    const result = await identify(dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('http://192.0.2.1:8787 is not a loopback address');
  });
});

describe('the real cas serve proves itself, and its file goes when it does', () => {
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  let dir: string;
  beforeAll(async () => {
    const d = tempDir();
    dirs.push(d);
    dir = d.path;
    serve = await startServe(['--data-dir', dir]);
  });
  afterAll(async () => {
    if (serve) await stopChild(serve.child, 'SIGKILL');
  });

  it('writes server.json 0600 with a secret, and CLI commands use the server', async () => {
    const file = join(dir, 'server.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({ url: serve?.info.url, pid: serve?.child.pid });
    expect(written.secret).toMatch(/^[0-9a-f]{64}$/);
    // The server holds DuckDB's lock: only a command that trusted it can succeed.
    const result = await identify(dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 'u1' });
  });

  it("a server.json copied into another data directory (with a backup) does not lead that directory's commands to it", async () => {
    const other = tempDir();
    dirs.push(other);
    for (const name of ['server.json', 'credentials.json'])
      copyFileSync(join(dir, name), join(other.path, name));
    const result = await runCli(['identify', '--id', 'only-in-copy', '--data-dir', other.path, '--json']);
    // Its proof names the directory it holds: the copy's commands wrote into it (found by probing).
    expect(result.stderr).toContain('could not prove it is the cas serve that wrote it');
    expect(result.code, result.stderr).toBe(0);
    const served = await runCli(['users', 'list', '--data-dir', dir, '--json']);
    expect(served.code, served.stderr).toBe(0);
    expect(served.stdout).not.toContain('only-in-copy');
    const copy = await runCli(['users', 'list', '--data-dir', other.path, '--json']);
    expect(copy.stdout).toContain('only-in-copy');
  });

  it('killed with -9 it leaves server.json; the next command drops it and runs embedded', async () => {
    if (!serve) throw new Error('no server');
    await stopChild(serve.child, 'SIGKILL');
    serve = undefined;
    expect(existsSync(join(dir, 'server.json'))).toBe(true);
    const result = await identify(dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 'u1', traits: { plan: 'pro' } });
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
  });

  /** A `cas serve` allowing one connection per address, and one connection holding it. */
  async function cappedServer() {
    const d = tempDir();
    dirs.push(d);
    const capped = await startServe(['--data-dir', d.path, '--max-connections-per-address', '1']);
    // Its headers never finish (the header timeout is far off).
    const held = connectSocket(Number(new URL(capped.info.url).port), '127.0.0.1');
    await once(held, 'connect');
    held.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    return { d, capped, held };
  }

  it('a server at its connection cap keeps its file: the command asks again and gets through once there is room', async () => {
    const { d, capped, held } = await cappedServer();
    try {
      const command = identify(d.path);
      // Released while the command asks again, which it does for up to --retry-time (60 s).
      setTimeout(() => held.destroy(), 1500);
      const result = await command;
      expect(result.stderr).toMatch(/is busy \(/);
      expect(result.stderr).not.toContain('removed it');
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ id: 'u1' });
      expect(existsSync(join(d.path, 'server.json'))).toBe(true);
    } finally {
      held.destroy();
      await stopChild(capped.child, 'SIGKILL');
    }
  });

  it('a server busy for the whole of --retry-time: exit 5 naming it and its business, not "in use by another process"', async () => {
    const { d, capped, held } = await cappedServer();
    try {
      const result = await runCli(['identify', '--id', 'u1', '--data-dir', d.path, '--retry-time', '2']);
      expect(result.code, result.stderr).toBe(5);
      expect(result.stderr).toContain(`the cas serve at ${capped.info.url} holding the data directory`);
      expect(result.stderr).toMatch(/was busy \(.+\) for \d+ s \(--retry-time\)/);
      expect(result.stderr).not.toContain('in use by another process');
      // --retry-time 2, where the wait was a fixed 10 s.
      expect(result.ms).toBeLessThan(9_000);
      expect(existsSync(join(d.path, 'server.json'))).toBe(true);
    } finally {
      held.destroy();
      await stopChild(capped.child, 'SIGKILL');
    }
  });

  it('SIGHUP (the terminal closed) stops it cleanly and removes server.json', async () => {
    const d = tempDir();
    dirs.push(d);
    const hup = await startServe(['--data-dir', d.path]);
    try {
      expect(existsSync(join(d.path, 'server.json'))).toBe(true);
      expect(await stopChild(hup.child, 'SIGHUP')).toBe(0);
      expect(existsSync(join(d.path, 'server.json'))).toBe(false);
    } finally {
      await stopChild(hup.child, 'SIGKILL');
    }
  });
});

describe('cas serve over a directory another process holds a moment', () => {
  // It gave up at once (exit 5), where every other command waits up to 10 s: a restart racing a
  // command left no server running (found by probing).
  it('waits for it, as the other commands do, and then serves', async () => {
    const data = tempDir();
    const { spawnTracked } = await import('./helpers/processes.js');
    const holder = spawnTracked(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { DuckDBInstance } from '@duckdb/node-api';
         const db = await DuckDBInstance.create(${JSON.stringify(join(data.path, 'cas.duckdb'))});
         console.log('ready'); setTimeout(() => { db.closeSync(); process.exit(0); }, 1500);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let serve: Awaited<ReturnType<typeof startServe>> | undefined;
    try {
      await once(holder.stdout as NodeJS.ReadableStream, 'data');
      const started = Date.now();
      serve = await startServe(['--data-dir', data.path]);
      expect(Date.now() - started).toBeGreaterThan(1_000);
      const events = await runCli(['events', '--data-dir', data.path, '--json']);
      expect(events.code, events.stderr).toBe(0);
    } finally {
      holder.kill('SIGKILL');
      if (serve) await stopChild(serve.child);
      data.cleanup();
    }
  }, 40_000);
});
