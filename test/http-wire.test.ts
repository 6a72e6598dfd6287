import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv, runCli, startServe, stopChild } from './helpers/cli.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15, items 9, 10 and 11 (serve): lone UTF-16 surrogates, wrong methods, the limits as `serve`
 * flags, and bad `serve` flag values; and timestamps outside the years the store keeps; against a
 * real `cas serve` started with small limits.
 */
const KEY = 'wire-key';
const PROJECT = 'wire-project';
const auth = { authorization: `Bearer ${KEY}`, 'x-app-id': PROJECT };

const dir = tempDir();
let child: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  const started = await startServe([
    ...['--data-dir', dir.path, '--api-key', KEY, '--project', PROJECT],
    ...['--max-events', '3', '--max-event-size', '2KiB', '--max-body', '8KiB'],
  ]);
  child = started.child;
  url = started.info.url;
}, 30_000);

afterAll(async () => {
  if (child) await stopChild(child, 'SIGKILL');
  dir.cleanup();
});

async function call(method: string, path: string, body?: string, headers: Record<string, string> = auth) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return { status: response.status, allow: response.headers.get('allow'), json: JSON.parse(text) as never };
}

const track = (session: string, user: string) =>
  `{"type":"track","event":"Probe","session_id":"${session}","user_id":"${user}"}`;

describe('lone UTF-16 surrogates (issue 15, item 9)', () => {
  it('refuses ids holding \\uD800-style escapes without their pair, naming the path, and stores nothing', async () => {
    // Stored as U+FFFD, these two sessions (of two users) used to become one session with two users.
    const queue = await call(
      'POST',
      '/bc/v1/events/queue',
      `[${track('s-\\ud800', 'u1')},${track('s-\\udfff', 'u2')}]`,
    );
    expect(queue.status).toBe(400);
    expect(queue.json).toMatchObject({ code: 'invalid_input', issues: [{ path: '[0].session_id' }] });
    expect(queue.json).toMatchObject({
      message: expect.stringMatching(/^\[0\]\.session_id: .*lone UTF-16 surrogate/),
    });

    const single = await call('POST', '/bc/v1/events/event', track('s-ok', 'u-\\udc00'));
    expect(single.status).toBe(400);
    expect(single.json).toMatchObject({ issues: [{ path: 'user_id' }] });

    const traits = await call('POST', '/bc/v1/user/identify', '{"id":"u3","traits":{"k\\ud800":"v"}}');
    expect(traits.status).toBe(400);
    expect(traits.json).toMatchObject({ issues: [{ path: 'traits.k\ud800' }] });

    const range = encodeURIComponent('2000-01-01');
    const live = await call('GET', `/bc/v1/live-events/events?start=${range}&end=2100-01-01&limit=100`);
    expect(live.status).toBe(200);
    expect(JSON.stringify(live.json)).not.toContain('Probe');
  });

  it('accepts a well-formed pair written as escapes', async () => {
    const ok = await call('POST', '/bc/v1/events/queue', `[${track('s-\\ud83d\\ude00', 'u1')}]`);
    expect(ok.status).toBe(200);
  });
});

describe('timestamps outside the stored years', () => {
  const at = (session: string, timestamp: string) =>
    track(session, 'u-years').replace('}', `,"timestamp":"${timestamp}"}`);

  // Epoch µs past 2^53 (before ~1685, after ~2255) made the store's append throw: a 500.
  it.each([
    '0000-01-01T00:00:00Z',
    '1500-06-01T00:00:00Z',
    '1899-12-31T23:59:59.999Z',
    '2200-01-01T00:00:00Z',
    '2262-04-12T00:00:00Z',
    '3000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
  ])('%s is 400 at its path on every event route, and nothing is stored', async (timestamp) => {
    const issue = { message: 'must be between 1900-01-01 and 2199-12-31 (UTC)' };
    const queue = await call(
      'POST',
      '/bc/v1/events/queue',
      `[${track('s-years-ok', 'u-years')},${at('s-years', timestamp)}]`,
    );
    expect(queue.status).toBe(400);
    expect(queue.json).toMatchObject({
      code: 'invalid_input',
      issues: [{ path: '[1].timestamp', ...issue }],
    });
    const single = await call('POST', '/bc/v1/events/event/track', at('s-years', timestamp));
    expect(single.status).toBe(400);
    expect(single.json).toMatchObject({ issues: [{ path: 'timestamp', ...issue }] });
    const identify = await call(
      'POST',
      '/bc/v1/events/event/identify',
      `{"type":"identify","user_id":"u-years","timestamp":"${timestamp}"}`,
    );
    expect(identify.status).toBe(400);
    expect(identify.json).toMatchObject({ issues: [{ path: 'timestamp', ...issue }] });
  });

  it('stores the first and last instants of the range exactly, and charts any range without a 500', async () => {
    const first = '1900-01-01T00:00:00.000Z';
    const last = '2199-12-31T23:59:59.999Z';
    const stored = await call(
      'POST',
      '/bc/v1/events/queue',
      `[${at('s-first', first)},${at('s-last', last)}]`,
    );
    expect(stored.status).toBe(200);
    const read = await call('GET', `/bc/v1/live-events/events?start=0001-01-01&end=9999-12-31&limit=100`);
    const times = (read.json as Array<{ session_id: string; event: string; timestamp: string }>)
      .filter((e) => e.event === 'Probe' && ['s-first', 's-last'].includes(e.session_id))
      .map((e) => e.timestamp)
      .sort();
    expect(times).toEqual([first, last]);
    for (const [start, end] of [
      ['0001-01-01', '0001-01-08'],
      ['9999-12-20T00:00:00-12:00', '9999-12-31T23:59:59-12:00'],
    ]) {
      const controls = encodeURIComponent(
        JSON.stringify({
          range: { start, end, tz: 'Pacific/Kiritimati', period: 'day' },
          eventFilters: [{ event_name: 'Probe' }],
        }),
      );
      const chart = await call('GET', `/bc/v1/charts/segmentation-chart?chartControls=${controls}`);
      expect(chart.status).toBe(200);
    }
  });
});

describe('wrong methods (issue 15, item 10)', () => {
  it.each([
    ['DELETE', '/bc/v1/events/queue', '', 'POST'],
    ['DELETE', '/bc/v1/events/queue', '{', 'POST'],
    ['PUT', '/bc/v1/user/identify', '{"id":"x"}', 'POST'],
    ['GET', '/bc/v1/events/queue', undefined, 'POST'],
    ['POST', '/bc/v1/agg/event-names', '[]', 'GET, HEAD'],
    ['OPTIONS', '/healthz', undefined, 'GET, HEAD'],
  ])(
    '%s %s is 405 with Allow, before its body or credentials are looked at',
    async (method, path, body, allow) => {
      for (const headers of [auth, {}]) {
        const res = await call(method, path, body, headers);
        expect(res.status).toBe(405);
        expect(res.allow).toBe(allow);
        expect(res.json).toMatchObject({ status: 405, code: 'method_not_allowed' });
      }
    },
  );

  it('a route without a body takes the JSON content type with no body; one with a body still refuses it empty', async () => {
    const made = await call(
      'POST',
      '/bc/v1/cohorts',
      JSON.stringify({ name: 'Wire', terms: [{ termFilter: { type: 'cohort', name: 'All Users' } }] }),
    );
    expect(made.status).toBe(200);
    const id = (made.json as { cohort_id: string }).cohort_id;
    // Clients that send their JSON headers on every request (found by probing: 400 "body is empty").
    const removed = await call('DELETE', `/bc/v1/cohorts?cohort_id=${id}`, '');
    expect(removed.status).toBe(200);
    expect((await call('GET', '/bc/v1/cohorts')).json).toEqual([]);
    const empty = await call('POST', '/bc/v1/user/identify', '');
    expect(empty.status).toBe(400);
    expect(empty.json).toMatchObject({ message: 'request body is empty; send a JSON value' });
  });

  // Both read "invalid input" at path "": a missing body as "required", every unknown key quoted in
  // one message, a 10,000-character one twice (found by fuzzing).
  it('no body at all is said to be missing; an unknown key is named at its own path, cut at 100 characters', async () => {
    const bare = await call('POST', '/bc/v1/cohorts');
    expect(bare.status).toBe(400);
    expect(bare.json).toMatchObject({
      issues: [
        { path: '', message: 'the request has no body: send a JSON value (Content-Type: application/json)' },
      ],
    });
    const long = 'k'.repeat(5_000);
    const extra = await call(
      'POST',
      '/bc/v1/cohorts',
      JSON.stringify({
        name: 'Extra',
        terms: [{ termFilter: { type: 'cohort', name: 'All Users' } }],
        a: 1,
        [long]: 2,
      }),
    );
    expect(extra.status).toBe(400);
    expect(extra.json).toMatchObject({
      issues: [
        { path: 'a', message: 'unknown field' },
        { path: `${'k'.repeat(100)}…`, message: 'unknown field' },
      ],
    });
    expect(JSON.stringify(extra.json)).not.toContain('k'.repeat(101));
  });

  it('a query parameter given twice is refused as given twice, not as the wrong type', async () => {
    const res = await call(
      'GET',
      '/bc/v1/live-events/events?start=2025-01-01&end=2025-01-02&limit=2&limit=3',
    );
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ issues: [{ path: 'limit', message: 'given 2 times; give it once' }] });
    const once = await call('GET', '/bc/v1/live-events/events?start=2025-01-01&end=2025-01-02&limit=x');
    expect(once.json).toMatchObject({ issues: [{ path: 'limit', message: 'must be a number' }] });
  });

  // Kept as unknown keys and dropped: the chart answered for the whole project (found by probing).
  it('a parameter of one value in bracket form is refused naming it; object parameters keep their bracket form', async () => {
    const controls = encodeURIComponent(
      JSON.stringify({
        range: { start: '2025-01-01', end: '2025-01-08', period: 'day', tz: 'UTC' },
        eventFilters: [{ event_name: 'Any Event' }],
      }),
    );
    for (const path of [
      `/bc/v1/charts/segmentation-chart?chartControls=${controls}&session_id[0]=s1`,
      '/bc/v1/live-events/events?start=2025-01-01T00:00:00Z&end=2025-01-02T00:00:00Z&limit[0]=1',
      '/bc/v1/agg/event-names?event_regex[0]=%5EQ%24',
      '/bc/v1/live-events/realtime?session_id[0]=s1',
    ]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(400);
      const name = /[?&](\w+)\[0\]=/.exec(path.replace(`chartControls=${controls}`, ''))?.[1];
      expect(res.json, path).toMatchObject({
        issues: [{ path: name, message: expect.stringContaining('takes one value') }],
      });
    }
    const bracketControls =
      '/bc/v1/charts/segmentation-chart?chartControls[range][start]=2025-01-01&chartControls[range][end]=2025-01-08' +
      '&chartControls[range][period]=day&chartControls[range][tz]=UTC&chartControls[eventFilters][0][event_name]=Any%20Event';
    expect((await call('GET', bracketControls)).status).toBe(200);
    const ranges =
      '/bc/v1/summary/event-counts?ranges[0][start]=2025-01-01T00:00:00Z&ranges[0][end]=2025-01-02T00:00:00Z';
    expect((await call('GET', ranges)).status).toBe(200);
  });

  it('a path parameter of any length is routed: credentials first, then a 400 naming it', async () => {
    const long = 'a'.repeat(501);
    expect((await call('GET', `/bc/v1/udi/${long}`, undefined, {})).status).toBe(401);
    const res = await call('GET', `/bc/v1/udi/${long}`);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ issues: [{ path: 'user_defined_intent_id' }] });
  });

  it('an unknown route is 404 even with a broken JSON body', async () => {
    const res = await call('POST', '/bc/v1/no-such-route', '{');
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ code: 'not_found' });
  });
});

describe('limits set on cas serve (issue 15, item 10)', () => {
  it('--max-events, --max-event-size and --max-body are what the service enforces', async () => {
    const events = (n: number, pad = 0) =>
      `[${Array.from({ length: n }, (_, i) => track(`s-lim-${i}`, 'u-lim').replace('}', `,"properties":{"pad":"${'x'.repeat(pad)}"}}`)).join(',')}]`;
    expect((await call('POST', '/bc/v1/events/queue', events(3))).status).toBe(200);
    const tooMany = await call('POST', '/bc/v1/events/queue', events(4));
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.json)).toMatch(/\b3\b/);
    const tooBigEvent = await call('POST', '/bc/v1/events/queue', events(1, 3 * 1024));
    expect(tooBigEvent.status).toBe(400);
    expect(JSON.stringify(tooBigEvent.json)).toMatch(/at most 2048 allowed/);
    const tooBigBody = await call(
      'POST',
      '/bc/v1/user/identify',
      `{"id":"x","traits":{"p":"${'x'.repeat(9 * 1024)}"}}`,
    );
    expect(tooBigBody.status).toBe(413);
  });

  it('--help lists every limit flag with its default', async () => {
    const help = (await runCli(['serve', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const flag of [
      '--max-body <size>',
      '--max-events <n>',
      '--max-event-size <size>',
      '--ingest-rate <n>',
      '--chart-rate <n>',
      '--auth-failure-rate <n>',
      '--headers-timeout <duration>',
      '--request-timeout <duration>',
      '--max-connections <n>',
      '--max-connections-per-address <n>',
      '--max-body-in-flight <size>',
      '--max-answer-in-flight <size>',
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toContain('(default: 10MiB)');
  });
});

/** Runs `cas serve` expecting it to exit on its own; killed (and failed) if it is still up after `ms`. */
function serveExit(args: string[], ms = 20_000): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawnTracked(process.execPath, [CAS_BIN, 'serve', ...args], {
      env: cleanEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), ms);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('error bodies stay bounded', () => {
  it('cuts an issue quoting the caller at 500 characters, as the message is', async () => {
    // `chartControls[]…[]` nested 2,000 times: its issue quoted it whole, 4 KB (found by probing).
    const res = await fetch(
      `${url}/bc/v1/charts/segmentation-chart?chartControls${'%5B%5D'.repeat(2000)}=1`,
      {
        headers: auth,
      },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string; issues: Array<{ path: string; message: string }> };
    expect(body.issues.length).toBeGreaterThan(0);
    for (const issue of body.issues) {
      expect(issue.message.length).toBeLessThanOrEqual(500);
      expect(issue.path.length).toBeLessThanOrEqual(500);
    }
    expect(body.issues[0]!.message).toMatch(/\.\.\.$/);
  });
});

describe('bad serve flag values (issue 15, item 11)', () => {
  const data = tempDir();
  let busy: Server | undefined;
  afterAll(() => {
    busy?.close();
    data.cleanup();
  });

  it.each([
    [['--port', '99999'], '--port'],
    [['--port', 'http'], '--port'],
    // Number('') is 0: it listened on a random port (found by probing).
    [['--port', ''], '--port'],
    [['--max-body', '10x'], '--max-body'],
    [['--request-timeout', '0'], '--request-timeout'],
    [['--max-connections', '-1'], '--max-connections'],
    [['--host', '10.255.255.1', '--port', '0'], '--host'],
    // One without the other was dropped without a word (found by probing).
    [['--api-key', 'only-key', '--port', '0'], '--api-key needs --project'],
    [['--project', 'only-project', '--port', '0'], '--project needs --api-key'],
    // Ignored without a word (found by probing).
    [['--endpoint', 'http://cas.example', '--port', '0'], 'cas serve runs the service itself: --endpoint'],
  ])('cas serve %j exits 2 naming %s', async (args, flag) => {
    const { code, stderr } = await serveExit([...args, '--data-dir', data.path]);
    expect(code, stderr).toBe(2);
    expect(stderr).toContain(flag);
    expect(stderr).not.toMatch(/this is a bug/);
  });

  it('a --project of another organization than the --api-key exits 2 naming it, not "this is a bug"', async () => {
    const own = tempDir();
    try {
      const first = await startServe([
        '--data-dir',
        own.path,
        '--api-key',
        'org-key',
        '--project',
        'org-project',
      ]);
      await stopChild(first.child, 'SIGTERM');
      const local = JSON.parse(readFileSync(join(own.path, 'credentials.json'), 'utf8')) as {
        project_id: string;
      };
      const { code, stderr } = await serveExit([
        '--data-dir',
        own.path,
        '--port',
        '0',
        '--api-key',
        'org-key',
        '--project',
        local.project_id,
      ]);
      expect(code, stderr).toBe(2);
      expect(stderr).toContain(`--project ${local.project_id}: belongs to another organization`);
      expect(stderr).not.toMatch(/this is a bug/);
    } finally {
      own.cleanup();
    }
  }, 30_000);

  it('a port already in use exits 2 naming --port', async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy?.listen(0, '127.0.0.1', resolve));
    const address = busy.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const { code, stderr } = await serveExit(['--port', String(port), '--data-dir', data.path]);
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(new RegExp(`--port ${port}: already in use`));
  }, 30_000);
});

// README: SIGINT and SIGTERM are how cas serve is stopped, and a clean stop exits 0. One sent while it
// started (as a service manager may) said "interrupted", exit 130 (found by probing).
describe('cas serve stopped while it starts', () => {
  it('exits 0 without "interrupted", and leaves no server.json', async () => {
    const data = tempDir();
    try {
      const proc = spawnTracked(
        process.execPath,
        [CAS_BIN, 'serve', '--port', '0', '--data-dir', data.path],
        {
          env: cleanEnv(),
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      // The store's file appears while the service opens it, before it listens.
      const file = join(data.path, 'cas.duckdb');
      for (let i = 0; i < 4000 && !existsSync(file) && proc.exitCode === null; i++) await sleep(5);
      proc.kill('SIGTERM');
      const code = await exited;
      expect(code, stderr).toBe(0);
      expect(stderr).not.toMatch(/interrupted/);
      expect(existsSync(join(data.path, 'server.json'))).toBe(false);
    } finally {
      data.cleanup();
    }
  });
});
