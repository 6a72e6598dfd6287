import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { liveFrameSchema } from '../src/shared/live-events.js';
import { CAS_BIN, cleanEnv, runCli, startServe, stopChild } from './helpers/cli.js';
import { startConnectProxy } from './helpers/connect-proxy.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/** `cas tail` as a user runs it beside a `cas serve` (real binary from dist, real service process). */

const dir = tempDir('cas-tail-');
afterAll(() => dir.cleanup());

interface Tail {
  child: ChildProcess;
  lines(): string[];
  /** Resolves once stdout holds `n` lines. */
  waitLines(n: number, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
  stderr(): string;
}

function startTail(args: string[], env: Record<string, string> = {}): Tail {
  const child = spawnTracked(process.execPath, [CAS_BIN, 'tail', ...args], {
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines = () => out.split('\n').filter((l) => l !== '');
  return {
    child,
    lines,
    exited,
    stderr: () => err,
    async waitLines(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (lines().length < n) {
        if (Date.now() > deadline) throw new Error(`${lines().length} of ${n} lines; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** POSTs to the queue route; `query` `?history=true` sends as `cas import` does. */
function sender(info: { url: string; api_key: string; project_id: string }, query = '') {
  return async (event: unknown) => {
    const res = await fetch(`${info.url}/bc/v1/events/queue${query}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${info.api_key}`,
        'x-app-id': info.project_id,
        'content-type': 'application/json',
      },
      body: JSON.stringify(event),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };
}

async function waitFor(done: () => boolean, about: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out; stderr: ${about()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const frames = (t: Tail) => t.lines().map((l) => liveFrameSchema.parse(JSON.parse(l)));

/** A `cas serve` over `data` and a `cas tail --json` following it (with retries enough for restarts). */
async function servedTail(data: string) {
  const { child: serve, info } = await startServe(['--data-dir', data]);
  const remote = ['--endpoint', info.url, '--api-key', info.api_key, '--project', info.project_id];
  return {
    serve,
    info,
    port: new URL(info.url).port,
    tail: startTail([...remote, '--json', '--retries', '20']),
  };
}

describe('cas tail', () => {
  it('--session started before the session prints its events as they commit (JSONL when piped) and exits 0 after Session Ended', async () => {
    const data = `${dir.path}/one`;
    const { child: serve, info } = await startServe(['--data-dir', data]);
    try {
      const tail = startTail(['--data-dir', data, '--session', 'S']);
      const send = sender(info);
      await send({ type: 'start_session', session_id: 'S', user_id: 'u1' });
      await send({ type: 'start_session', session_id: 'other', user_id: 'u2' });
      await send({
        type: 'track',
        event: 'Conversation Turn',
        session_id: 'S',
        properties: { user: 'hi', assistant: 'hello' },
      });
      // Printed before the session ends: followed live, not read back at the end.
      await tail.waitLines(3);
      expect(tail.child.exitCode).toBeNull();
      await send({ type: 'end_session', session_id: 'S' });
      expect(await tail.exited, tail.stderr()).toBe(0);
      const printed = frames(tail);
      expect(printed.map((f) => f.event)).toEqual([
        'Session Started',
        'Conversation Started',
        'Conversation Turn',
        'Conversation Ended',
        'Conversation Summary',
        'Session Ended',
      ]);
      expect(new Set(printed.map((f) => f.session_id))).toEqual(new Set(['S']));
      expect(new Set(printed.map((f) => f.event_id)).size).toBe(printed.length);
      // The same session once it has ended, from a --since after its end: nothing to print, and
      // no end will come (it waited for one until killed).
      const late = startTail(['--data-dir', data, '--session', 'S', '--since', '2099-01-01T00:00:00Z']);
      const timer = setTimeout(() => late.child.kill('SIGKILL'), 20_000);
      try {
        expect(await late.exited, late.stderr()).toBe(0);
      } finally {
        clearTimeout(timer);
      }
      expect(late.lines()).toEqual([]);
    } finally {
      await stopChild(serve);
    }
  });

  // The key came through the proxy, the socket went direct and never opened (found by probing).
  it('follows a remote service through HTTP_PROXY: the key and the socket both go through it', async () => {
    const { child: serve, info } = await startServe(['--data-dir', `${dir.path}/proxied`]);
    const proxy = await startConnectProxy();
    try {
      const remote = info.url.replace('127.0.0.1', 'cas-remote.invalid');
      const credentials = ['--api-key', info.api_key, '--project', info.project_id];
      const tail = startTail(['--endpoint', remote, ...credentials, '--session', 'S', '--json'], {
        HTTP_PROXY: proxy.url,
      });
      const send = sender(info);
      // Sent once the socket is open: its Session Started is then live, not history.
      await waitFor(
        () => proxy.asked.length >= 2,
        () => tail.stderr(),
      );
      await send({ type: 'start_session', session_id: 'S', user_id: 'u1' });
      await tail.waitLines(1);
      await send({ type: 'end_session', session_id: 'S' });
      expect(await tail.exited, tail.stderr()).toBe(0);
      expect(frames(tail).map((f) => f.event)).toEqual(['Session Started', 'Session Ended']);
      const host = new URL(remote).host;
      expect(new Set(proxy.asked)).toEqual(new Set([host]));
    } finally {
      await proxy.close();
      await stopChild(serve);
    }
  });

  it('follows across a restart of the service without printing an event twice', async () => {
    const data = `${dir.path}/two`;
    let { serve, info, port, tail } = await servedTail(data);
    try {
      await sender(info)({ type: 'start_session', session_id: 'R', user_id: 'u1', event_id: 'before' });
      await tail.waitLines(1);
      expect(await stopChild(serve)).toBe(0);
      ({ child: serve, info } = await startServe(['--data-dir', data, '--port', port]));
      await sender(info)({
        type: 'track',
        event: 'Feedback Given',
        session_id: 'R',
        event_id: 'after',
        properties: { rating: 5 },
      });
      await tail.waitLines(2);
      // Give a duplicate the chance to show up (history read again after the reconnect).
      await new Promise((r) => setTimeout(r, 500));
      const ids = frames(tail).map((f) => f.event_id);
      expect(ids).toEqual(['before', 'after']);
      expect(tail.stderr()).toMatch(/reconnecting/);
    } finally {
      await stopChild(tail.child);
      await stopChild(serve);
    }
  });
});

describe('cas tail and what the service sends again', () => {
  it('an event dated ahead of the clock does not hide what was stored while it was disconnected', async () => {
    const data = `${dir.path}/ahead`;
    let { serve, info, port, tail } = await servedTail(data);
    try {
      const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
      await sender(info)({
        type: 'track',
        event: 'Skewed',
        session_id: 'F',
        user_id: 'u1',
        timestamp: inAnHour,
      });
      await tail.waitLines(2);
      expect(await stopChild(serve)).toBe(0);
      ({ child: serve, info } = await startServe(['--data-dir', data, '--port', port]));
      // Stored before the tail reconnects (its backoff is 500 ms at least).
      await sender(info)({ type: 'track', event: 'During Gap', session_id: 'G', user_id: 'u1' });
      // The catch-up began an hour ahead and left it out (found by probing).
      await tail.waitLines(4, 30_000);
      expect(frames(tail).map((f) => f.event)).toEqual([
        'Session Started',
        'Skewed',
        'Session Started',
        'During Gap',
      ]);
    } finally {
      await stopChild(tail.child);
      await stopChild(serve);
    }
  });

  it('prints a row again when a replay changes it (a summary with the new turn), not when it is the same', async () => {
    const { child: serve, info } = await startServe(['--data-dir', `${dir.path}/replayed`]);
    const history = sender(info, '?history=true');
    const at = (s: number) => new Date(Date.now() - 600_000 + s * 1000).toISOString();
    const turn = (s: number) => ({
      type: 'track',
      event: 'Conversation Turn',
      session_id: 'H',
      conversation_id: 'c',
      user_id: 'u1',
      event_id: `turn-${s}`,
      timestamp: at(s),
      properties: { user: `q${s}`, assistant: 'a' },
    });
    // As `cas import` sends a session: its turns, then the end it adds (provisional).
    const end = (s: number) => ({
      type: 'end_session',
      session_id: 'H',
      event_id: 'H-end',
      timestamp: at(s),
      provisional: true,
    });
    const remote = ['--endpoint', info.url, '--api-key', info.api_key, '--project', info.project_id];
    const tail = startTail([...remote, '--json', '--since', '1h']);
    try {
      await history([turn(0), end(0)]);
      await tail.waitLines(6);
      // A later run's turn reopens the session: its end and summary are stored again, changed.
      await history([turn(30), end(30)]);
      await tail.waitLines(10);
      await new Promise((r) => setTimeout(r, 500));
      const summaries = frames(tail).filter((f) => f.event === 'Conversation Summary');
      // It dropped them as seen, leaving a one-turn summary (found by probing).
      expect(summaries.map((f) => f.properties?.turns)).toEqual([1, 2]);
      expect(new Set(summaries.map((f) => f.event_id)).size).toBe(1);
      // The rows stored again unchanged (the first turn, the starts) are not printed twice.
      expect(frames(tail).filter((f) => f.event_id === 'turn-0')).toHaveLength(1);
    } finally {
      await stopChild(tail.child);
      await stopChild(serve);
    }
  });
});

describe('cas tail over a data directory whose cas serve moves', () => {
  // It kept retrying the first address for good (found by probing).
  it('follows the server that holds the directory now, on another port', async () => {
    const data = `${dir.path}/moves`;
    let { child: serve, info } = await startServe(['--data-dir', data]);
    const tail = startTail(['--data-dir', data, '--json']);
    try {
      await sender(info)({ type: 'start_session', session_id: 'M', user_id: 'u1', event_id: 'first-port' });
      await tail.waitLines(1);
      const before = info.url;
      expect(await stopChild(serve)).toBe(0);
      ({ child: serve, info } = await startServe(['--data-dir', data]));
      expect(info.url).not.toBe(before);
      await sender(info)({ type: 'track', event: 'Moved', session_id: 'M', event_id: 'second-port' });
      await tail.waitLines(2, 30_000);
      expect(frames(tail).map((f) => f.event_id)).toEqual(['first-port', 'second-port']);
    } finally {
      await stopChild(tail.child);
      await stopChild(serve);
    }
  }, 60_000);
});

describe('cas tail after a reconnect', () => {
  it('prints every event stored while it was disconnected, more than one page of history', async () => {
    const data = `${dir.path}/gap`;
    let { serve, info, port, tail } = await servedTail(data);
    try {
      await sender(info)({ type: 'start_session', session_id: 'G', user_id: 'u1', event_id: 'first' });
      await tail.waitLines(1);
      expect(await stopChild(serve)).toBe(0);
      // While the service is down, 1,200 turns (more than the 1,000 of one history page) are imported
      // into its data directory; the socket never carries them. 1,100 of them share one millisecond,
      // which paging by time alone could not get past (found by probing: 100 were never printed).
      const file = `${dir.path}/gap.csv`;
      const t0 = Date.now();
      const rows = Array.from(
        { length: 1_200 },
        (_, i) => `${new Date(t0 + Math.max(0, i - 1_099)).toISOString()},G2,u2,q${i},a${i}`,
      );
      writeFileSync(file, `timestamp,session_id,user_id,user,assistant\n${rows.join('\n')}\n`);
      const imported = await runCli(['import', file, '--kind', 'turn', '--data-dir', data, '--json']);
      expect(imported.code, imported.stderr).toBe(0);
      ({ child: serve, info } = await startServe(['--data-dir', data, '--port', port]));
      const res = await fetch(
        `${info.url}/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&limit=10000`,
        { headers: { authorization: `Bearer ${info.api_key}`, 'x-app-id': info.project_id } },
      );
      const stored = ((await res.json()) as Array<{ event_id: string }>).map((e) => e.event_id);
      expect(stored.length).toBeGreaterThan(1_200);
      await tail.waitLines(stored.length, 60_000);
      await new Promise((r) => setTimeout(r, 500));
      const ids = frames(tail).map((f) => f.event_id);
      expect(ids).toHaveLength(stored.length);
      expect(new Set(ids)).toEqual(new Set(stored));
      expect(tail.stderr()).toMatch(/reconnecting/);
    } finally {
      await stopChild(tail.child);
      await stopChild(serve);
    }
  }, 120_000);
});

describe('cas serve --ws-port', () => {
  // Frames carry the person's primary id: after an alias, --user with the id the events were sent
  // under printed nothing (found by probing).
  it('--user matches every id of the person, after an alias too', async () => {
    const data = `${dir.path}/aliased`;
    const { child: serve, info } = await startServe(['--data-dir', data]);
    try {
      const send = sender(info);
      await send({ type: 'track', event: 'Before Alias', session_id: 'AL', user_id: 'u01' });
      expect(
        (await runCli(['alias', '--id', 'alice@example.com', '--previous', 'u01', '--data-dir', data])).code,
      ).toBe(0);
      await send({ type: 'track', event: 'After Alias', session_id: 'AL', user_id: 'alice@example.com' });
      await send({ type: 'track', event: 'Someone Else', session_id: 'BO', user_id: 'bob' });
      // Following: an alias made while tail runs gives frames a primary id tail had not been told of.
      const following = startTail([
        '--data-dir',
        data,
        '--user',
        'alice@example.com',
        '--json',
        '--since',
        '1m',
      ]);
      try {
        await following.waitLines(3);
        expect(
          (
            await runCli([
              'alias',
              '--id',
              'alice@new',
              '--previous',
              'alice@example.com',
              '--data-dir',
              data,
            ])
          ).code,
        ).toBe(0);
        await send({ type: 'track', event: 'Someone Else Again', session_id: 'BO', user_id: 'bob' });
        await send({ type: 'track', event: 'After Second Alias', session_id: 'AL', user_id: 'alice@new' });
        await following.waitLines(4);
        await new Promise((r) => setTimeout(r, 300));
        expect(frames(following).map((f) => f.event)).toEqual([
          'Session Started',
          'Before Alias',
          'After Alias',
          'After Second Alias',
        ]);
      } finally {
        await stopChild(following.child);
      }
      for (const user of ['u01', 'alice@example.com']) {
        const run = await runCli(['tail', '--data-dir', data, '--user', user, '--no-follow', '--json']);
        expect(run.code, run.stderr).toBe(0);
        const events = run.stdout
          .trim()
          .split('\n')
          .map((l) => liveFrameSchema.parse(JSON.parse(l)).event);
        expect(events, user).toEqual([
          'Session Started',
          'Before Alias',
          'After Alias',
          'After Second Alias',
        ]);
      }
    } finally {
      await stopChild(serve);
    }
  });

  // The note went to stderr under -q too, which promises no notes there.
  it('with no cas serve prints the history only, saying so unless -q', async () => {
    const data = `${dir.path}/alone`;
    const noted = await runCli(['tail', '--data-dir', data]);
    expect([noted.code, noted.stdout]).toEqual([0, '']);
    expect(noted.stderr).toContain('no cas serve runs over this data directory');
    const quiet = await runCli(['tail', '--data-dir', data, '-q']);
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, '', '']);
  });

  // It was read as a span back from a clock read again later: the events of its first milliseconds
  // (here, of the time the embedded service took to open) were left out (found by probing).
  it('--since an ISO time starts the history at that instant', async () => {
    const data = `${dir.path}/since-iso`;
    const file = `${dir.path}/since-iso.jsonl`;
    writeFileSync(
      file,
      `${JSON.stringify({ kind: 'event', event: 'Early', user_id: 'u', timestamp: '2024-03-01T10:00:00.050Z' })}\n`,
    );
    expect((await runCli(['import', file, '--data-dir', data, '--no-end'])).code).toBe(0);
    const res = await runCli([
      'tail',
      '--data-dir',
      data,
      '--no-follow',
      '--json',
      '-q',
      '--since',
      '2024-03-01T10:00:00Z',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('"Early"');
  });

  // `--event ''` and `--session ''` printed nothing and exited 0; `--user ''` was the service's 400 (found by probing).
  it('refuses an empty --event, --session, --user or --since, naming the flag', async () => {
    const data = `${dir.path}/empty-flags`;
    for (const flag of ['--event', '--session', '--user', '--since']) {
      const res = await runCli(['tail', '--data-dir', data, '--no-follow', flag, '']);
      expect([res.code, res.stderr.split('\n')[0]], flag).toEqual([2, `cas: ${flag} must not be empty`]);
    }
  });

  it('a port already in use exits 2 naming --ws-port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const res = await runCli(
        ['serve', '--data-dir', `${dir.path}/ws`, '--port', '0', '--ws-port', String(port)],
        {
          timeoutMs: 30_000,
        },
      );
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(`--ws-port ${port}: already in use`);
    } finally {
      taken.close();
    }
  });
});

describe('cas tail when the live-events socket will not open', () => {
  // An upgrade never answered held tail forever with nothing printed; one answered 502 was tried
  // again forever, and the history never came (found by probing).
  it('prints the history after the first failed attempt and ends after --retries: never answered, or 502', async () => {
    const data = `${dir.path}/no-socket`;
    const { child: serve, info } = await startServe(['--data-dir', data]);
    const held: import('node:net').Socket[] = [];
    let mode: 'hang' | '502' = 'hang';
    const proxy = (await import('node:http')).createServer((req, res) => {
      const target = new URL(info.url);
      const forward = (globalThis as { fetch: typeof fetch }).fetch;
      void forward(`${target.origin}${req.url}`, {
        method: req.method ?? 'GET',
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(
            (e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host',
          ),
        ),
      }).then(async (answer) => {
        res.writeHead(answer.status, {
          'content-type': answer.headers.get('content-type') ?? 'application/json',
        });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    proxy.on('upgrade', (_req, socket: import('node:net').Socket) => {
      if (mode === 'hang') held.push(socket);
      else socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as import('node:net').AddressInfo).port}`;
    try {
      await sender(info)([
        {
          type: 'track',
          event: 'Stored',
          user_id: 'u1',
          session_id: 'ns1',
          timestamp: new Date().toISOString(),
        },
      ]);
      for (const [m, code] of [
        ['hang', 7],
        ['502', 5],
      ] as const) {
        mode = m;
        const remote = ['--endpoint', url, '--api-key', info.api_key, '--project', info.project_id];
        const tail = startTail([...remote, '--json', '--since', '1h', '--retries', '2', '--timeout', '1000']);
        try {
          expect(
            await Promise.race([tail.exited, new Promise((r) => setTimeout(() => r('running'), 30_000))]),
          ).toBe(code);
          expect(frames(tail).map((f) => f.event)).toContain('Stored');
          expect(tail.stderr()).toMatch(/^cas: live events: .*reconnecting in/m);
        } finally {
          tail.child.kill('SIGKILL');
        }
      }
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await stopChild(serve);
    }
  }, 60_000);
});
