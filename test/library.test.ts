import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './helpers/cli.js';
import { spawnTracked } from './helpers/processes.js';
import { startServiceOn, startTestService, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 17: the client library used as an app uses it. The app (test/support/library-app.mjs) runs
 * as its own process from a directory whose `node_modules/cas` is this package, imports `cas` by
 * name (so `exports` and the built `dist/` are what is tested), takes its configuration from the
 * environment, and talks to the real service; what the service stored is then read back through its
 * read routes.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TRACE_HOOK = fileURLToPath(new URL('./support/trace-loads.mjs', import.meta.url));
const HEAVY = /@duckdb|\/fastify\/|\/dist\/service\//;

const dir = tempDir('cas-library-');
let svc: TestService;

interface AppOutput {
  user: Record<string, unknown>;
  typeError: string;
  pendingBefore: number;
  pendingAfter: number;
  errorsAfterFirstFlush: boolean;
  hasErrors: boolean;
  errors: Array<Record<string, unknown>>;
  callbackErrors: Array<Record<string, unknown>>;
  liveEvents: Array<Record<string, unknown>>;
  closedError: string;
}

type Run = { code: number | null; stdout: string; stderr: string };

/** A child process in the app's directory (tracked, so it dies with this file whatever happens). */
function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(process.execPath, args, {
      cwd: join(dir.path, 'app'),
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const runApp = (script: string, env: Record<string, string>) => run(['--import', TRACE_HOOK, script], env);

const remote = () => ({ CAS_ENDPOINT: svc.url, CAS_API_KEY: svc.apiKey, CAS_PROJECT_ID: svc.projectId });

let out: AppOutput;
let loaded: string[];
/** The other runs, started beside the main one (each is a process of its own: wall time matters). */
let exitRun: Promise<Run>;
let embeddedRun: Promise<Run>;
let embeddedExitRun: Promise<Run>;
let typesRun: Promise<Run>;
let debugRun: Promise<Run>;

beforeAll(async () => {
  svc = await startTestService();
  const app = join(dir.path, 'app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(app, 'node_modules', 'cas'), 'dir');
  for (const name of [
    'library-app.mjs',
    'library-app-embedded.mjs',
    'library-app-embedded-exit.mjs',
    'library-app-exit.mjs',
    'library-app-debug.mjs',
    'library-app-nosocket.mjs',
  ]) {
    copyFileSync(join(ROOT, 'test/support', name), join(app, name));
  }
  copyFileSync(join(ROOT, 'test/support/library-app-types.ts'), join(app, 'types.ts'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        types: [],
        // The package's declarations themselves are checked too, as a strict app would.
        skipLibCheck: false,
      },
      files: ['types.ts'],
    }),
  );
  const trace = join(dir.path, 'loads.txt');
  const main = runApp('library-app.mjs', {
    ...remote(),
    CAS_TRACE_FILE: trace,
    XDG_DATA_HOME: join(dir.path, 'data-home'),
  });
  exitRun = runApp('library-app-exit.mjs', { ...remote(), CAS_TRACE_FILE: join(dir.path, 'exit.txt') });
  embeddedRun = runApp('library-app-embedded.mjs', {
    CAS_DATA_DIR: join(dir.path, 'embedded-data'),
    CAS_TRACE_FILE: join(dir.path, 'embedded.txt'),
  });
  embeddedExitRun = runApp('library-app-embedded-exit.mjs', {
    CAS_DATA_DIR: join(dir.path, 'embedded-exit-data'),
    CAS_TRACE_FILE: join(dir.path, 'embedded-exit.txt'),
  });
  typesRun = run([join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], {});
  debugRun = runApp('library-app-debug.mjs', { ...remote(), CAS_TRACE_FILE: join(dir.path, 'debug.txt') });
  // Settled here, so a failing run fails its own test and never goes unhandled.
  for (const p of [exitRun, embeddedRun, embeddedExitRun, typesRun, debugRun]) p.catch(() => undefined);
  const result = await main;
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  out = JSON.parse(result.stdout) as AppOutput;
  loaded = readFileSync(trace, 'utf8').trim().split('\n');
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  dir.cleanup();
});

async function stored(): Promise<Array<Record<string, unknown>>> {
  const query = new URLSearchParams({
    start: '2026-01-05T00:00:00Z',
    end: '2026-01-06T00:00:00Z',
    session_id: 'lib-s1',
    limit: '1000',
  });
  const res = await svc.get(`/bc/v1/live-events/events?${query}`);
  expect(res.status).toBe(200);
  // Newest first, ties in reverse commit order: reversed, the order the rows were written in.
  return (res.json as Array<Record<string, unknown>>).reverse();
}

/**
 * The events of 2026-01-05 an embedded app stored in `dataDir` (in the order written), read through a
 * service started over that directory with the directory's own key.
 */
async function storedIn(dataDir: string, scope: Record<string, string> = {}) {
  const local = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Record<string, string>;
  const over = await startServiceOn(dataDir);
  try {
    const headers = { authorization: `Bearer ${local.api_key}`, 'x-app-id': String(local.project_id) };
    const query = new URLSearchParams({
      start: '2026-01-05T00:00:00Z',
      end: '2026-01-06T00:00:00Z',
      ...scope,
    });
    const res = await over.get(`/bc/v1/live-events/events?${query}`, headers);
    expect(res.status).toBe(200);
    return (res.json as Array<Record<string, unknown>>).reverse();
  } finally {
    await over.stop();
  }
}

const names = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => `${r.event}${r.conversation_id ? ` ${r.conversation_id}` : ''}`);

describe('the client library, used as an app uses it (issue 17)', () => {
  it('is imported by the package name and, with an endpoint, loads neither the service nor DuckDB', () => {
    expect(loaded.some((u) => u.includes('/dist/lib/index.js'))).toBe(true);
    expect(loaded.filter((u) => HEAVY.test(u))).toEqual([]);
  });

  it('refuses a wrong shape at the call, returns at once, and flushAndContinue waits for the acknowledgements', () => {
    expect(out.typeError).toMatch(/^TypeError: session\.trackConversationTurn: assistant: required/);
    expect(out.pendingBefore).toBe(6); // the start carrying the attributes, and five calls
    expect(out.pendingAfter).toBe(0);
    expect(out.errorsAfterFirstFlush).toBe(false);
    expect(out.closedError).toBe('SessionClosedError');
    expect(out.user).toMatchObject({ id: 'u-lib', traits: { plan: 'pro' } });
  });

  it('reports the refused event through hasErrors, getErrors and onError, and only it', () => {
    expect(out.hasErrors).toBe(true);
    expect(out.errors).toEqual([{ errored: true, status: 409, message: expect.any(String) }]);
    expect(out.errors[0]?.message).toMatch(/^Conversation Turn \(event_id [0-9a-f-]{36}\) not stored: .*c1/);
    expect(out.callbackErrors).toEqual(out.errors);
  });

  it('stores the session as sent: every event once, in order, the conversations summarised', async () => {
    const rows = await stored();
    expect(names(rows)).toEqual([
      'Session Started',
      'App Opened',
      'Conversation Started c1',
      'Conversation Turn c1',
      'User Identified',
      'Conversation Function c1',
      'Conversation Turn c1',
      'Conversation Ended c1',
      'Conversation Summary c1',
      'Conversation Started c2',
      'Conversation Turn c2',
      'Conversation Usage c2',
      'Conversation Ended c2',
      'Conversation Summary c2',
      'Session Ended',
    ]);
    // The device-only session is the identified user's, from its first event.
    expect(new Set(rows.map((r) => r.user_id))).toEqual(new Set(['u-lib']));
    const byName = (name: string, conversation?: string) =>
      rows.find(
        (r) => r.event === name && (conversation === undefined || r.conversation_id === conversation),
      );
    expect(byName('Session Started')?.properties).toEqual({ app: 'demo', build: 7 });
    expect(byName('Session Ended')?.properties).toEqual({ outcome: 'done' });
    expect(byName('App Opened')).toMatchObject({
      timestamp: '2026-01-05T10:00:00.000Z',
      properties: { source: 'test' },
    });
    expect(byName('Conversation Turn', 'c1')?.properties).toMatchObject({
      user: 'what is the weather?',
      assistant: 'let me look',
      assistant_id: 'helper',
      model: 'gpt-4o',
      prompt_tokens: 100,
      completion_tokens: 20,
    });
    expect(byName('Conversation Function', 'c1')?.properties).toEqual({
      name: 'weather',
      args: '{"city":"Paris"}',
      result: 'sunny',
      runtime: 15,
    });
    expect(byName('Conversation Usage', 'c2')?.properties).toMatchObject({
      model: 'gpt-4o-mini',
      prompt_tokens: 10,
      completion_tokens: 5,
    });
    const c1 = byName('Conversation Summary', 'c1')?.properties as Record<string, number>;
    expect(c1).toMatchObject({ turns: 2, function_calls: 1, prompt_tokens: 100, completion_tokens: 20 });
    expect(c1.cost).toBeGreaterThan(0.01);
    expect(byName('Conversation Summary', 'c2')?.properties).toMatchObject({
      turns: 1,
      prompt_tokens: 10,
      completion_tokens: 5,
    });
    // Client-generated ids: one per call, unique.
    const sent = rows.filter((r) => r.origin_event_id === undefined && r.event !== 'Conversation Started');
    for (const row of sent)
      expect(row.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
  });

  it('merged the device into the user, with both sets of traits', async () => {
    const res = await svc.post('/bc/v1/user/identify', { id: 'u-lib' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: 'u-lib', traits: { plan: 'pro', name: 'Ada' } });
  });

  it('onEvent received every stored event of the session once, in order, the summaries included', async () => {
    const rows = await stored();
    expect(out.liveEvents.map((e) => e.event_id)).toEqual(rows.map((r) => r.event_id));
    expect(
      out.liveEvents.find((e) => e.event === 'Conversation Summary' && e.conversation_id === 'c2'),
    ).toBeDefined();
  });

  it('sends what is pending when the app ends without flush or close', async () => {
    const result = await exitRun;
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const query = new URLSearchParams({
      start: '2026-01-05T00:00:00Z',
      end: '2026-01-06T00:00:00Z',
      session_id: 'exit-1',
    });
    const res = await svc.get(`/bc/v1/live-events/events?${query}`);
    const rows = (res.json as Array<Record<string, unknown>>).reverse();
    expect(rows.map((r) => r.event)).toEqual([
      'Session Started',
      'Unflushed 0',
      'Unflushed 1',
      'Unflushed 2',
    ]);
  });

  it('without an endpoint, runs the service embedded over the data directory (one for two Clients) and stops it on close', async () => {
    const dataDir = join(dir.path, 'embedded-data');
    const result = await embeddedRun;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const app = JSON.parse(result.stdout) as { user: Record<string, unknown>; errors: unknown[] };
    expect(app.errors).toEqual([]);
    expect(app.user).toMatchObject({ traits: { kind: 'kiosk' } });
    // The data directory now holds the session: read it back through a service over it.
    const rows = await storedIn(dataDir, { session_id: 'emb-1' });
    expect(rows.map((r) => r.event)).toEqual(['Session Started', 'Embedded', 'Session Ended']);
    // The second Client of the app, over the same directory, shared its service.
    const second = await storedIn(dataDir, { session_id: 'emb-2' });
    expect(second.map((r) => r.event)).toEqual(['Session Started', 'Second']);
    // The third, started while that service closed, opened the directory after it.
    const third = await storedIn(dataDir, { session_id: 'emb-3' });
    expect(third.map((r) => r.event)).toEqual(['Session Started', 'Third']);
  });

  it('without an endpoint or close(), still exits: its pending events stored, the directory let go', async () => {
    // Before, the embedded service's listening socket kept the app alive for good (test timeout).
    const result = await embeddedExitRun;
    expect(result).toMatchObject({ code: 0, stderr: '' });
    // Opening the directory again also proves the app's service closed it (one process at a time).
    const rows = await storedIn(join(dir.path, 'embedded-exit-data'));
    expect(rows.map((r) => `${r.session_id} ${r.event}`).sort()).toEqual([
      'emb-exit Flushed',
      'emb-exit Session Started',
      'emb-exit-2 Pending',
      'emb-exit-2 Session Started',
      'emb-exit-3 Live',
      'emb-exit-3 Session Started',
    ]);
  });

  // Found by probing: "cas: cas: POST …" for a local connection, no status or time for a remote one,
  // and Node's MaxListenersExceededWarning in the app's output from the eleventh Client.
  it('debug prints each request as -v does, once prefixed; many Clients make no Node warning', async () => {
    const result = await debugRun;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ errors: [] });
    const lines = result.stderr.trim().split('\n');
    expect(lines.filter((l) => /^cas: POST \/bc\/v1\/events\/queue → 200 in \d+ ms$/.test(l))).toHaveLength(
      11,
    );
    expect(result.stderr).not.toMatch(/cas: cas:|Warning/);
  });

  it('type-checks an app against the shipped declarations', async () => {
    const tsc = await typesRun;
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
  }, 60_000);
});

describe('an app whose live socket the service refuses at every attempt', () => {
  it('still sends its events and exits, flush() returning, onError saying they did not reach onEvent', async () => {
    const limited = await startServiceOn(join(dir.path, 'nosocket-data'), {
      limits: { maxConnectionsPerAddress: 1 },
    });
    try {
      const env = {
        CAS_ENDPOINT: limited.url,
        CAS_API_KEY: limited.apiKey,
        CAS_PROJECT_ID: limited.projectId,
      };
      // One after the other: both apps' connections would share the one the service allows.
      for (const [session, args] of [
        ['nosocket-flush', []],
        ['nosocket-exit', ['exit']],
      ] as const) {
        const result = await run(['library-app-nosocket.mjs', ...args], {
          ...env,
          CAS_TEST_SESSION: session,
        });
        expect({ session, code: result.code, stderr: result.stderr }).toEqual({
          session,
          code: 0,
          stderr: '',
        });
        const { errors } = JSON.parse(result.stdout) as { errors: string[] };
        // flush() waits for the socket and then says what it missed; an app that just ends does not
        // ask (close() or flush() is where the library reports it: README).
        const missed = new RegExp(
          `^live events of session ${session}: \\d+ of its own stored event\\(s\\), and those the service generated from them, did not reach onEvent before close`,
        );
        expect(errors).toEqual(args.length === 0 ? [expect.stringMatching(missed)] : []);
        const query = `start=2026-01-05&end=2026-01-06&session_id=${session}`;
        const rows = (await limited.get(`/bc/v1/live-events/events?${query}`)).json as Array<{
          event: string;
        }>;
        expect(rows.map((r) => r.event).reverse()).toEqual(['Session Started', 'Stored', 'Session Ended']);
      }
    } finally {
      await limited.stop();
    }
  }, 60_000);
});
