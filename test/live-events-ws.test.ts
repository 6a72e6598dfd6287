import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { errorBodySchema } from '../src/shared/errors.js';
import { liveFrameSchema } from '../src/shared/live-events.js';
import { at, storedEvents } from './helpers/ingest.js';
import { openSocket, realtimeKey, SocketRefused, sdkSocketUrl } from './helpers/live-socket.js';
import { within } from './helpers/raw-http.js';
import { startServiceOn, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 17: live events over a websocket, driven as the hosted service's own SDKs drive it. The
 * JavaScript SDK gets a key from `realtime`, opens the root path of the base URL with
 * `Authorization: Bearer <key>`, JSON.parses each frame and treats `event === "MLError"` as an error
 * carrying `properties.error_message`; the Python SDK asks `realtime?session_id=` for a session's key.
 */

let t: TestService;
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  dir = tempDir();
  // A small socket buffer so the slow reader below is cut after little data; --ws-port on a free port.
  t = await startServiceOn(dir.path, { wsPort: 0, live: { bufferBytes: 512 * 1024 } });
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

const sdkHeaders = (key: string) => ({ 'Content-Type': 'application/json', Authorization: `Bearer ${key}` });

/** The JavaScript SDK's per-event POSTs (bare key); returns status and body. */
const js = (route: string, body: Record<string, unknown>) =>
  t.post(`/bc/v1/events/event/${route}`, body, { authorization: t.apiKey, 'x-app-id': t.projectId });

/** The Python SDK's one-object queue POSTs. */
const py = (body: Record<string, unknown>) => t.post('/bc/v1/events/queue', body);

const withoutErrors = (frames: Array<Record<string, unknown>>, session: string) =>
  frames.filter((f) => f.event !== 'MLError' && f.session_id === session);

describe('live events as the JavaScript SDK reads them', () => {
  it('every event of a session, generated ones included, arrives once, in order; a 409 arrives as MLError', async () => {
    const key = await realtimeKey(t, undefined, { authorization: t.apiKey, 'x-app-id': t.projectId });
    const socket = await openSocket(sdkSocketUrl(t.url), sdkHeaders(key));
    const s = 'js-live';
    expect((await js('start-session', { session_id: s, user_id: 'u-js', timestamp: at(0) })).status).toBe(
      200,
    );
    const turn = { session_id: s, conversation_id: 'c1', properties: { user: 'hi', assistant: 'hello' } };
    expect((await js('conversation-turn', { ...turn, timestamp: at(10) })).status).toBe(200);
    expect(
      (await js('end-conversation', { session_id: s, conversation_id: 'c1', timestamp: at(20) })).status,
    ).toBe(200);
    const refused = await js('conversation-turn', { ...turn, timestamp: at(30) });
    expect(refused.status).toBe(409);
    expect((await js('end-session', { session_id: s, timestamp: at(40) })).status).toBe(200);

    const stored = await storedEvents(t, s);
    await socket.frameCount(stored.length + 1);
    const events = withoutErrors(socket.frames, s);
    for (const frame of socket.frames) liveFrameSchema.parse(frame);
    // The same envelope as live-events/events, in the same order, each once.
    expect(events).toEqual(stored);
    expect(stored.map((e) => e.event)).toEqual([
      'Session Started',
      'Conversation Started',
      'Conversation Turn',
      'Conversation Ended',
      'Conversation Summary',
      'Session Ended',
    ]);
    const errors = socket.frames.filter((f) => f.event === 'MLError');
    expect(errors).toHaveLength(1);
    const message = errorBodySchema.parse(refused.json).message;
    expect(errors[0]).toMatchObject({
      session_id: s,
      app_id: t.projectId,
      properties: { error_message: message },
    });
    // A project-wide socket stays open after a session ends.
    expect(socket.ws.readyState).toBe(WebSocket.OPEN);
    socket.ws.close();
  });
});

describe('live events as the Python SDK reads them', () => {
  it('a session-scoped socket sees only its session, MLError frames included, and closes after Session Ended', async () => {
    const s = 'py-live';
    const key = await realtimeKey(t, s);
    const socket = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(key));
    const other = 'py-other';
    expect(
      (await py({ type: 'start_session', session_id: s, user_id: 'u-py', timestamp: at(0) })).status,
    ).toBe(200);
    expect(
      (await py({ type: 'start_session', session_id: other, user_id: 'u-2', timestamp: at(0) })).status,
    ).toBe(200);
    const turn = (ts: number) => ({
      type: 'track',
      event: 'Conversation Turn',
      session_id: s,
      conversation_id: 'None',
      timestamp: at(ts),
      properties: {
        user: 'how much?',
        assistant: 'ten',
        model: 'gpt-4o',
        prompt_tokens: 10,
        completion_tokens: 5,
      },
    });
    expect((await py(turn(10))).status).toBe(200);
    expect((await py({ type: 'end_session', session_id: other, timestamp: at(15) })).status).toBe(200);
    // Refused whole (400): an unknown type names the session, so its socket hears of it.
    const invalid = await py({ type: 'nonsense', session_id: s });
    expect(invalid.status).toBe(400);
    expect((await py({ type: 'end_session', session_id: s, timestamp: at(20) })).status).toBe(200);
    const late = await py(turn(30));
    expect(late.status).toBe(409);

    const closed = await socket.closed;
    expect(closed).toEqual({ code: 1000, reason: 'session ended' });
    const stored = await storedEvents(t, s);
    expect(withoutErrors(socket.frames, s)).toEqual(stored);
    expect(socket.frames.every((f) => f.session_id === s)).toBe(true);
    const errors = socket.frames.filter((f) => f.event === 'MLError');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.properties).toMatchObject({
      status: 400,
      error_message: expect.stringMatching(/type/),
    });
    // Named by its session's person, as the session's events are ('' before: found by probing).
    expect(errors[0]!.user_id).toBe('u-py');
    // The socket closed after the last stored event: Session Ended, its summary before it.
    expect(socket.frames.at(-1)).toMatchObject({ event: 'Session Ended' });
  });

  it('a socket opened for a session that has ended closes at once (1000), as one open at its end did', async () => {
    const s = 'py-ended-before';
    expect(
      (await py({ type: 'start_session', session_id: s, user_id: 'u-e', timestamp: at(0) })).status,
    ).toBe(200);
    expect((await py({ type: 'end_session', session_id: s, timestamp: at(5) })).status).toBe(200);
    const socket = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(await realtimeKey(t, s)));
    // It waited for nothing, forever (found by probing).
    expect(await within(socket.closed, 5_000, 'still open')).toEqual({ code: 1000, reason: 'session ended' });
    expect(socket.frames).toEqual([]);
    // A session not ended yet keeps its socket open.
    const open = 'py-still-open';
    expect(
      (await py({ type: 'start_session', session_id: open, user_id: 'u-e', timestamp: at(0) })).status,
    ).toBe(200);
    const waiting = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(await realtimeKey(t, open)));
    expect((await py({ type: 'track', event: 'Ping', session_id: open, timestamp: at(1) })).status).toBe(200);
    await waiting.frameCount(1);
    expect(waiting.ws.readyState).toBe(WebSocket.OPEN);
    waiting.ws.close();
  });

  it('an earlier event that replays an open session sends its own rows, not the stored ones again', async () => {
    const s = 'py-replayed';
    const socket = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(await realtimeKey(t, s)));
    const turn = (ts: number, extra: Record<string, unknown> = {}) => ({
      type: 'track',
      event: 'Conversation Turn',
      session_id: s,
      conversation_id: 'c',
      timestamp: at(ts),
      properties: { user: 'x', assistant: 'y' },
      ...extra,
    });
    expect((await py(turn(600, { user_id: 'rex', event_id: 'late-first' }))).status).toBe(200);
    await socket.frameCount(3);
    // Dated before the session's start: the session is replayed with it (its starts move to it).
    expect((await py(turn(0, { event_id: 'early' }))).status).toBe(200);
    await socket.frameCount(6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ids = socket.frames.map((f) => f.event_id);
    // The stored turn went out a second time (found by probing).
    expect(ids.filter((id) => id === 'late-first')).toHaveLength(1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(socket.frames.slice(3).map((f) => f.event)).toEqual([
      'Session Started',
      'Conversation Started',
      'Conversation Turn',
    ]);
    socket.ws.close();
  });

  it("a session_id on the socket narrows an unscoped key; one other than the key's is refused", async () => {
    const key = await realtimeKey(t);
    const socket = await openSocket(`${t.url.replace(/^http/, 'ws')}/?session_id=q-live`, sdkHeaders(key));
    expect(
      (await py({ type: 'start_session', session_id: 'q-noise', user_id: 'u', timestamp: at(0) })).status,
    ).toBe(200);
    expect(
      (await py({ type: 'start_session', session_id: 'q-live', user_id: 'u', timestamp: at(0) })).status,
    ).toBe(200);
    expect((await py({ type: 'end_session', session_id: 'q-live', timestamp: at(5) })).status).toBe(200);
    expect((await socket.closed).code).toBe(1000);
    expect(socket.frames.map((f) => [f.session_id, f.event])).toEqual([
      ['q-live', 'Session Started'],
      ['q-live', 'Session Ended'],
    ]);
    const scoped = await realtimeKey(t, 'q-one');
    const wrong = await openSocket(
      `${t.url.replace(/^http/, 'ws')}/?session_id=q-two`,
      sdkHeaders(scoped),
    ).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(SocketRefused);
    expect((wrong as SocketRefused).status).toBe(401);
    // An empty one opened a socket on the whole project, and a second was ignored (found by probing).
    for (const query of ['?session_id=', '?session_id=q-live&session_id=q-noise']) {
      const refused = await openSocket(`${t.url.replace(/^http/, 'ws')}/${query}`, sdkHeaders(key)).catch(
        (e: unknown) => e,
      );
      expect(refused, query).toBeInstanceOf(SocketRefused);
      expect((refused as SocketRefused).status, query).toBe(400);
    }
  });
});

describe('a revoked API key', () => {
  it('voids the live tokens issued to it and closes their open sockets', async () => {
    const secret = 'live-contractor-key-0001';
    const org = (await t.get('/bc/v1/orgkeys')).json as Array<{ organization_id: string }>;
    const organization_id = org[0]!.organization_id;
    const put = await t.request('PUT', '/bc/v1/orgkeys', { organization_id, apikey: secret });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    const theirs = { authorization: `Bearer ${secret}`, 'x-app-id': t.projectId };
    const [early, late] = [await realtimeKey(t, undefined, theirs), await realtimeKey(t, undefined, theirs)];
    const open = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(early));
    // The service's own key keeps its socket.
    const own = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(await realtimeKey(t)));
    const revoked = await t.request('DELETE', `/bc/v1/orgkeys?apikey=${secret}`);
    expect(revoked.status, JSON.stringify(revoked.json)).toBe(200);
    expect((await within(open.closed, 10_000, { code: 'still open' })).code).toBe(1008);
    const refused = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(late)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SocketRefused);
    expect((refused as SocketRefused).status).toBe(401);
    expect(own.ws.readyState).toBe(WebSocket.OPEN);
    own.ws.close();
  });
});

describe('the socket itself', () => {
  it('is refused with our error body without a key, with a bad one, and at other paths', async () => {
    const base = t.url.replace(/^http/, 'ws');
    const key = await realtimeKey(t);
    const cases: Array<[string, Record<string, string>, number]> = [
      [`${base}/`, {}, 401],
      [`${base}/`, { Authorization: 'Bearer lv1.e30.AAAA' }, 401],
      [`${base}/`, { Authorization: `Bearer ${key}x` }, 401],
      [`${base}/`, { Authorization: `Bearer ${key}`, 'X-App-ID': 'another-project' }, 401],
      [`${base}/bc/v1/user/identify`, { Authorization: `Bearer ${key}` }, 404],
      // The API key itself is not a socket key.
      [`${base}/bc/v1/live-events/ws`, { Authorization: `Bearer ${t.apiKey}` }, 401],
      // Naming another tenant is a 403, as on every HTTP route; the socket opened (found by probing).
      [`${base}/bc/v1/live-events/ws?app_id=another-project`, { Authorization: `Bearer ${key}` }, 403],
      [`${base}/?organization_id=org_other`, { Authorization: `Bearer ${key}` }, 403],
    ];
    for (const [url, headers, status] of cases) {
      const refused = await openSocket(url, headers).catch((e: unknown) => e);
      expect(refused, url).toBeInstanceOf(SocketRefused);
      const { status: got, body } = refused as SocketRefused;
      expect(got, `${url} ${body}`).toBe(status);
      const parsed = errorBodySchema.parse(JSON.parse(body));
      expect(parsed.message).not.toContain(key);
    }
    // The browser form and the documented path.
    const browser = await openSocket(
      `${base}/bc/v1/live-events/ws?authorization_key=${encodeURIComponent(key)}`,
    );
    browser.ws.close();
    expect((await browser.closed).code).toBe(1005);
    // Its own project and organization named, or an empty value, open as before.
    const own = await openSocket(
      `${base}/bc/v1/live-events/ws?app_id=${encodeURIComponent(t.projectId)}&organization_id=&authorization_key=${encodeURIComponent(key)}`,
    );
    own.ws.close();
    expect((await own.closed).code).toBe(1005);
    // realtime itself authenticates like every route.
    expect((await t.get('/bc/v1/live-events/realtime', { authorization: '', 'x-app-id': '' })).status).toBe(
      401,
    );
    expect((await t.get('/bc/v1/live-events/realtime', { authorization: 'Bearer nope' })).status).toBe(403);
  });

  it('--ws-port: a second listener, for sockets only, as the SDKs address localhost:400x', async () => {
    const wsUrl = t.service.wsUrl;
    expect(wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const key = await realtimeKey(t, 'ws-port');
    const socket = await openSocket(wsUrl!, sdkHeaders(key));
    expect(
      (await py({ type: 'start_session', session_id: 'ws-port', user_id: 'u', timestamp: at(0) })).status,
    ).toBe(200);
    expect((await py({ type: 'end_session', session_id: 'ws-port', timestamp: at(1) })).status).toBe(200);
    expect((await socket.closed).code).toBe(1000);
    expect(socket.frames.map((f) => f.event)).toEqual(['Session Started', 'Session Ended']);
    const plain = await fetch(wsUrl!.replace(/^ws/, 'http'));
    expect(plain.status).toBe(404);
    expect(errorBodySchema.parse(await plain.json()).code).toBe('not_found');
  });

  it('a reader that keeps up takes a commit larger than its buffer in stride', async () => {
    const key = await realtimeKey(t, 'burst');
    const socket = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(key));
    const text = 'y'.repeat(1_000);
    const events = Array.from({ length: 1_100 }, (_, i) => ({
      type: 'track',
      event: 'Burst',
      session_id: 'burst',
      user_id: 'u-burst',
      timestamp: at(i),
      properties: { text },
    }));
    expect((await t.post('/bc/v1/events/queue', events)).status).toBe(200);
    // Session Started, then 1,100 frames of about 1.2 KB: more than the 512 KiB a socket may have waiting.
    await socket.frameCount(1_101);
    expect(socket.frames.slice(1).map((f) => f.timestamp)).toEqual(events.map((e) => e.timestamp));
    expect(socket.ws.readyState).toBe(WebSocket.OPEN);
    socket.ws.close();
  });

  it('a reader that stops reading is closed (1013) once its buffer is full; the service stays healthy', async () => {
    const key = await realtimeKey(t);
    const socket = await openSocket(t.url.replace(/^http/, 'ws'), sdkHeaders(key));
    const before = t.service.liveSockets();
    // Stop reading: the kernel's buffers fill, then the service's own, bounded at 512 KiB here.
    (socket.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const big = 'x'.repeat(200_000);
    let sent = 0;
    for (let i = 0; i < 150 && t.service.liveSockets() >= before; i++) {
      const events = Array.from({ length: 5 }, (_, j) => ({
        type: 'track',
        event: 'Big',
        session_id: 'slow',
        user_id: 'u-slow',
        timestamp: at(i * 5 + j),
        properties: { blob: big },
      }));
      expect((await t.post('/bc/v1/events/queue', events)).status).toBe(200);
      sent += 5;
    }
    expect(t.service.liveSockets()).toBe(before - 1);
    (socket.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await socket.closed;
    expect([1013, 1006]).toContain(closed.code);
    if (closed.code === 1013) expect(closed.reason).toMatch(/too slow/);
    expect(socket.frames.length).toBeLessThan(sent);
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe("the embedded service (a big import's: a worker thread serving loopback HTTP)", () => {
  it('accepts sockets too, and closing it with a socket open says 1001 to the reader', async () => {
    // The built package: the worker entry is a built file beside embedded.js (npm test builds first).
    const { startEmbeddedService } = (await import(
      '../dist/service/embedded.js' as string
    )) as typeof import('../src/service/embedded.js');
    const data = tempDir('cas-live-embedded-');
    const embedded = await startEmbeddedService({
      dataDir: data.path,
      log: () => undefined,
      thread: true,
    });
    try {
      expect(embedded.where).toBe('thread');
      const headers = { authorization: `Bearer ${embedded.apiKey}`, 'x-app-id': embedded.projectId };
      const res = await fetch(`${embedded.url}/bc/v1/live-events/realtime`, { headers });
      const { authorization_key: key } = (await res.json()) as { authorization_key: string };
      const socket = await openSocket(embedded.url.replace(/^http/, 'ws'), sdkHeaders(key));
      const sent = await fetch(`${embedded.url}/bc/v1/events/queue`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'start_session', session_id: 'emb', user_id: 'u', timestamp: at(0) }),
      });
      expect(sent.status).toBe(200);
      await socket.frameCount(1);
      expect(socket.frames[0]).toMatchObject({ event: 'Session Started', session_id: 'emb' });
      await embedded.close();
      expect((await socket.closed).code).toBe(1001);
    } finally {
      await embedded.close();
      data.cleanup();
    }
  });
});
