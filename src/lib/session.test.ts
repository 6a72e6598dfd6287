import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFlakyProxy } from '../../test/helpers/flaky-proxy.js';
import { type QueueServer, startQueueServer } from '../../test/helpers/queue-server.js';
import { Client } from './client.js';
import { ServiceCallError, type ServiceError, SessionClosedError } from './errors.js';

/**
 * Sessions against a small real server speaking the queue route (test/helpers/queue-server.ts): what
 * each call puts on the wire, when it is refused at the call, and the flush semantics. The whole
 * library against the real service is test/library.test.ts.
 */
let server: QueueServer;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  server = await startQueueServer({
    refuse: (e) => (e.event === 'Refused Here' ? 'conversation "c9" is closed' : undefined),
  });
});
afterAll(() => server.close());

/** V8's gc() in a test: the flag is read when a context is made, so a new one exposes it. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const client = (extra: Record<string, unknown> = {}) =>
  new Client({ endpoint: server.url, apiKey: 'k', projectId: 'p', ...extra });
const storedOf = (sessionId: string) => [...server.stored.values()].filter((e) => e.session_id === sessionId);

describe('Session calls', () => {
  it('put each call on the wire in call order, with client-made ids and the time of the call', async () => {
    const c = client();
    const s = c.createSession({ sessionId: 'w1', id: 'u1', deviceId: 'd1', conversationId: 'conv' });
    const before = Date.now();
    s.trackEvent({ event: 'Opened', properties: { n: 1 } });
    s.trackConversationTurn({
      user: 'hi',
      assistant: 'hello',
      properties: { intent: 'greet' },
      usage: { model: 'gpt-4o', promptTokens: 3, completionTokens: 4 },
      timestamp: '2026-01-05T10:00:00+02:00',
    });
    s.trackConversationUsage({
      conversationId: 'other',
      cost: { cost: 0.5 },
      timestamp: Date.UTC(2026, 0, 5),
    });
    s.trackFunctionCall({ name: 'f', args: { a: [1] }, result: 'ok', runtime: 7, timestamp: new Date(0) });
    s.userIdentify({ id: 'u1', traits: { plan: 'pro' } });
    s.userAlias({ id: 'u1-new', previousId: 'u1' });
    s.endConversation();
    s.endSession({ attributes: { done: true } });
    const after = Date.now();
    await s.flush();
    const sent = storedOf('w1');
    expect(sent.map((e) => e.event ?? e.type)).toEqual([
      'Opened',
      'Conversation Turn',
      'Conversation Usage',
      'Conversation Function',
      'identify',
      'alias',
      'Conversation Ended',
      'end_session',
    ]);
    for (const e of sent) expect(e.event_id).toMatch(UUID);
    expect(new Set(sent.map((e) => e.event_id)).size).toBe(sent.length);
    const [opened, turn, usage, fn, identify, alias, endConv, endSession] = sent;
    expect(opened).toMatchObject({ type: 'track', user_id: 'u1', device_id: 'd1' });
    // Before any conversation call, a custom event joins no conversation (see the test below).
    expect(opened).not.toHaveProperty('conversation_id');
    const openedAt = Date.parse(String(opened?.timestamp));
    expect(openedAt).toBeGreaterThanOrEqual(before);
    expect(openedAt).toBeLessThanOrEqual(after);
    expect(turn).toMatchObject({
      timestamp: '2026-01-05T10:00:00+02:00',
      conversation_id: 'conv',
      properties: {
        intent: 'greet',
        user: 'hi',
        assistant: 'hello',
        model: 'gpt-4o',
        prompt_tokens: 3,
        completion_tokens: 4,
      },
    });
    expect(usage).toMatchObject({
      conversation_id: 'other',
      properties: { cost: 0.5 },
      timestamp: '2026-01-05T00:00:00.000Z',
    });
    expect(fn).toMatchObject({
      timestamp: '1970-01-01T00:00:00.000Z',
      properties: { name: 'f', args: '{"a":[1]}', result: 'ok', runtime: 7 },
    });
    // Identify and alias name only their own user: the session's id beside them would contradict.
    expect(identify).toMatchObject({
      type: 'identify',
      user_id: 'u1',
      device_id: 'd1',
      traits: { plan: 'pro' },
    });
    expect(alias).toEqual(expect.objectContaining({ type: 'alias', id: 'u1-new', previous_id: 'u1' }));
    expect(alias).not.toHaveProperty('user_id');
    expect(endConv).toMatchObject({ conversation_id: 'conv' });
    expect(endSession).toMatchObject({ type: 'end_session', attributes: { done: true } });
    await c.close();
  });

  it('send the start with its attributes first, at the first event time, only when attributes are given', async () => {
    const c = client();
    const a = c.createSession({ sessionId: 'w2', deviceId: 'd2', attributes: { plan: 'free' } });
    a.trackEvent({ event: 'E', timestamp: '2026-02-01T00:00:00Z' });
    const b = c.createSession({ sessionId: 'w3', deviceId: 'd3' });
    b.trackEvent({ event: 'E' });
    await c.close();
    expect(storedOf('w2').map((e) => [e.type, e.timestamp])).toEqual([
      ['start_session', '2026-02-01T00:00:00Z'],
      ['track', '2026-02-01T00:00:00Z'],
    ]);
    expect(storedOf('w2')[0]).toMatchObject({ device_id: 'd2', attributes: { plan: 'free' } });
    expect(storedOf('w3').map((e) => e.type)).toEqual(['track']);
  });

  it.each([
    [
      (s: Sess) => s.trackConversationTurn({ user: 'x' } as never),
      /trackConversationTurn: assistant: required/,
    ],
    [
      (s: Sess) => s.trackEvent({ event: 'E', conversation_id: 'c' } as never),
      /trackEvent: unknown field "conversation_id" \(did you mean "conversationId"\?\)/,
    ],
    [
      (s: Sess) => s.trackEvent({ event: 'E', timestamp: '2026-01-05 10:00' }),
      /trackEvent: timestamp: must be an ISO 8601 time/,
    ],
    // The wire's bounds, named by the caller's fields (they named properties.prompt_tokens: probing).
    [
      (s: Sess) =>
        s.trackConversationUsage({ cost: { model: 'gpt-4o', promptTokens: 2e9, completionTokens: 1 } }),
      /trackConversationUsage: cost\.promptTokens: must be at most 1,000,000,000$/,
    ],
    [
      (s: Sess) => s.trackConversationUsage({ cost: { cost: 2e6 } }),
      /trackConversationUsage: cost\.cost: must be at most 1,000,000/,
    ],
    [
      (s: Sess) => s.trackFunctionCall({ name: 'f', runtime: 2e10 }),
      /trackFunctionCall: runtime: must be at most 10,000,000,000 ms$/,
    ],
    [
      // Its form only: not also the range it is not in (found by probing).
      (s: Sess) => s.trackEvent({ event: 'E', timestamp: 'yesterday' }),
      /trackEvent: timestamp: must be an ISO 8601 time with Z or an offset$/,
    ],
    [(s: Sess) => s.trackEvent({ event: 'E', timestamp: Number.NaN }), /timestamp/],
    [
      (s: Sess) => s.trackEvent({ event: 'E', timestamp: '3000-01-01T00:00:00Z' }),
      /trackEvent: timestamp: must be between 1900-01-01 and 2199-12-31/,
    ],
    [
      (s: Sess) => s.trackEvent({ event: 'E', timestamp: new Date(Date.UTC(1500, 0, 1)) }),
      /trackEvent: timestamp: must be between 1900-01-01 and 2199-12-31/,
    ],
    [(s: Sess) => s.trackEvent({ event: 'Session Started' }), /event: "Session Started" is reserved/],
    [
      (s: Sess) => s.trackEvent({ event: 'E', properties: { o: { deep: 1 } } as never }),
      /properties\.o: must be/,
    ],
    [
      (s: Sess) => s.trackConversationUsage({ cost: { model: 'm', promptTokens: 1 } } as never),
      /cost\.completionTokens: required/,
    ],
    [(s: Sess) => s.trackFunctionCall({ name: 'f', runtime: 1.5 }), /runtime: must be a whole number/],
    // A whole number past exact is too large, not "not a whole number" (found by probing).
    [
      (s: Sess) => s.trackFunctionCall({ name: 'f', runtime: 1e20 }),
      /^session\.trackFunctionCall: runtime: must be at most 10,000,000,000 ms$/,
    ],
    [
      (s: Sess) =>
        s.trackConversationUsage({ cost: { model: 'm', promptTokens: 2 ** 53, completionTokens: 1 } }),
      /^session\.trackConversationUsage: cost\.promptTokens: must be at most 1,000,000,000$/,
    ],
    // Names another call records: it said "properties: required", which the caller never gave.
    [
      (s: Sess) => s.trackEvent({ event: 'Conversation Turn' }),
      /^session\.trackEvent: event: "Conversation Turn" is recorded by session\.trackConversationTurn\(\)$/,
    ],
    [
      (s: Sess) => s.trackEvent({ event: 'Conversation Usage' }),
      /recorded by session\.trackConversationUsage\(\)$/,
    ],
    [
      (s: Sess) => s.trackEvent({ event: 'Conversation Function' }),
      /recorded by session\.trackFunctionCall\(\)$/,
    ],
    [(s: Sess) => s.trackEvent({ event: 'Session Ended' }), /recorded by session\.endSession\(\)$/],
    [
      (s: Sess) => {
        const loop: Record<string, unknown> = {};
        loop.self = loop;
        s.trackFunctionCall({ name: 'f', args: { loop } });
      },
      /^session\.trackFunctionCall: args: cannot be serialized as JSON \(circular structure\)$/,
    ],
    [
      (s: Sess) => s.trackFunctionCall({ name: 'f', result: { n: 1n } }),
      /^session\.trackFunctionCall: result: cannot be serialized as JSON \(a BigInt\)$/,
    ],
    [
      (s: Sess) => {
        let deep: unknown[] = [];
        for (let i = 0; i < 100_000; i++) deep = [deep];
        s.trackFunctionCall({ name: 'f', args: deep });
      },
      /^session\.trackFunctionCall: args: cannot be serialized as JSON \(nested too deeply\)$/,
    ],
    [
      (s: Sess) =>
        s.trackFunctionCall({
          name: 'f',
          result: {
            toJSON() {
              throw new Error('no\nmore');
            },
          },
        }),
      /^session\.trackFunctionCall: result: cannot be serialized as JSON \(no\)$/,
    ],
    [(s: Sess) => s.userAlias(undefined as never), /userAlias: id: required; previousId: required/],
    // The service refuses them, so a call took them and the app learnt of it only from getErrors().
    [
      (s: Sess) => s.trackConversationTurn({ user: '\ud800', assistant: 'a' }),
      /^session\.trackConversationTurn: user: holds a lone UTF-16 surrogate/,
    ],
    [
      (s: Sess) => s.trackEvent({ event: 'E', properties: { tags: ['ok', 'x\udc00'] } }),
      /^session\.trackEvent: properties\.tags\[1\]: holds a lone UTF-16 surrogate/,
    ],
  ])(
    'throw a TypeError naming the call and the path for a wrong shape (%#), and send nothing',
    async (call, message) => {
      const c = client();
      const s = c.createSession({ sessionId: 'bad-shapes', deviceId: 'd' });
      expect(() => call(s)).toThrow(TypeError);
      expect(() => call(s)).toThrow(message);
      expect(s.pending).toBe(0);
      await c.close();
    },
  );

  it('createSession and userIdentify refuse a lone surrogate at the call, naming the field', async () => {
    const c = client();
    expect(() => c.createSession({ sessionId: 'sur\ud800', id: 'u' })).toThrow(
      /^client\.createSession: sessionId: holds a lone UTF-16 surrogate/,
    );
    await expect(c.userIdentify({ id: 'surr\udc00' })).rejects.toThrow(
      /^client\.userIdentify: id: holds a lone UTF-16 surrogate/,
    );
    await c.close();
  });

  it("a custom event joins the session's conversation only while a conversation call has it open", async () => {
    const c = client();
    const s = c.createSession({ sessionId: 'w-conv', id: 'u1', conversationId: 'conv' });
    s.trackEvent({ event: 'Before' });
    s.trackConversationTurn({ user: 'hi', assistant: 'hello' });
    s.trackEvent({ event: 'During' });
    s.trackEvent({ event: 'Named', conversationId: 'elsewhere' });
    s.endConversation();
    // Refused with 409 when it joined the ended conversation (found by probing).
    s.trackEvent({ event: 'After' });
    await s.flush();
    const conversations = Object.fromEntries(
      storedOf('w-conv')
        .filter(
          (e) => e.type === 'track' && e.event !== 'Conversation Turn' && e.event !== 'Conversation Ended',
        )
        .map((e) => [e.event, e.conversation_id ?? null]),
    );
    expect(conversations).toEqual({ Before: null, During: 'conv', Named: 'elsewhere', After: null });
    expect(s.getErrors()).toEqual([]);
  });
  it('refuses __proto__, constructor and prototype keys wherever it takes an object, at their path', async () => {
    // JSON.parse makes an own `__proto__`, as an app forwarding a request body would.
    const bad = (key: string) => JSON.parse(`{"ok":1,"${key}":1}`) as Record<string, number>;
    const c = client();
    const s = c.createSession({ sessionId: 'forbidden', deviceId: 'd' });
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const at = (path: string) => new RegExp(`${path}\\.${key}: key "${key}" is not allowed`);
      expect(() => s.trackEvent({ event: 'E', properties: bad(key) })).toThrow(
        at('^session\\.trackEvent: properties'),
      );
      expect(() => s.trackConversationTurn({ user: 'u', assistant: 'a', properties: bad(key) })).toThrow(
        at('trackConversationTurn: properties'),
      );
      expect(() => s.trackFunctionCall({ name: 'f', properties: bad(key) })).toThrow(
        at('trackFunctionCall: properties'),
      );
      expect(() => s.endConversation({ properties: bad(key) })).toThrow(at('endConversation: properties'));
      expect(() => s.userIdentify({ id: 'u', traits: bad(key) })).toThrow(at('userIdentify: traits'));
      expect(() => s.endSession({ attributes: bad(key) })).toThrow(at('endSession: attributes'));
      expect(() => c.createSession({ sessionId: 's', deviceId: 'd', attributes: bad(key) })).toThrow(
        at('createSession: attributes'),
      );
      await expect(c.userIdentify({ id: 'u', traits: bad(key) })).rejects.toThrow(
        at('client\\.userIdentify: traits'),
      );
      expect(() => s.trackEvent(JSON.parse(`{"event":"E","${key}":1}`))).toThrow(
        new TypeError(`session.trackEvent: key "${key}" is not allowed`),
      );
      expect(() => s.trackConversationUsage({ cost: JSON.parse(`{"cost":1,"${key}":1}`) })).toThrow(
        `session.trackConversationUsage: cost: key "${key}" is not allowed`,
      );
    }
    expect(s.pending).toBe(0);
    await c.close();
  });

  // As JSON and the analytics SDKs apps know do; it was a TypeError (found by probing).
  it('leaves out properties and traits set to undefined', async () => {
    const c = client();
    const s = c.createSession({ sessionId: 'undef', id: 'u1' });
    s.trackEvent({ event: 'Opened', properties: { plan: undefined, n: 1 } });
    s.userIdentify({ id: 'u1', traits: { team: undefined, plan: 'pro' } });
    await s.flush();
    await c.close();
    const sent = storedOf('undef');
    expect(sent.find((e) => e.event === 'Opened')?.properties).toEqual({ n: 1 });
    expect(sent.find((e) => e.type === 'identify')?.traits).toEqual({ plan: 'pro' });
  });

  // They rejected with the HTTP client's own classes, which the package does not export (probing).
  it('userIdentify and userAlias reject with a ServiceCallError: {errored: true, status, message}', async () => {
    // This server answers the queue route only: 404 for the user routes.
    const c = client({ retries: 1 });
    const refused = await c.userAlias({ id: 'a', previousId: 'b' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServiceCallError);
    expect(refused).toMatchObject({
      errored: true,
      status: 404,
      message: expect.stringContaining('no such route'),
    });
    await c.close();
    const down = new Client({ endpoint: 'http://127.0.0.1:9', apiKey: 'k', projectId: 'p', retries: 1 });
    const unreachable = await down.userIdentify({ id: 'a' }).catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(ServiceCallError);
    expect(unreachable).toMatchObject({ errored: true, status: -1 });
    await down.close();
  });

  it('createSession requires a session id and a user or device', () => {
    const c = client();
    // TypeScript refuses it too (types.test.ts); JavaScript callers get the TypeError.
    expect(() => c.createSession({ sessionId: 's' } as never)).toThrow(
      /createSession: id: id or deviceId is required/,
    );
    expect(() => c.createSession({ deviceId: 'd' } as never)).toThrow(/createSession: sessionId: required/);
  });

  it('new Client refuses an unknown option instead of quietly using the embedded store', () => {
    expect(() => new Client({ endpiont: server.url, apiKey: 'k', projectId: 'p' } as never)).toThrow(
      new TypeError('new Client: unknown option "endpiont" (did you mean "endpoint"?)'),
    );
  });
});

type Sess = ReturnType<Client['createSession']>;

describe('flush, errors and close', () => {
  it('records a refused event once, with its reason, while the rest is stored; flush then refuses calls', async () => {
    const c = client();
    const seen: ServiceError[] = [];
    const s = c.createSession({
      sessionId: 'f1',
      deviceId: 'd',
      onError: (e) => {
        seen.push(e);
        throw new Error('an app callback that throws must not stop the worker');
      },
    });
    s.trackEvent({ event: 'Before' });
    s.trackEvent({ event: 'Refused Here' });
    s.trackEvent({ event: 'After' });
    expect(s.hasErrors()).toBe(false);
    await s.flushAndContinue();
    expect(storedOf('f1').map((e) => e.event)).toEqual(['Before', 'After']);
    expect(s.hasErrors()).toBe(true);
    expect(s.getErrors()).toEqual([{ errored: true, status: 409, message: expect.any(String) }]);
    expect(s.getErrors()[0]?.message).toMatch(
      /^Refused Here \(event_id .{36}\) not stored: session_id: conversation "c9" is closed$/,
    );
    expect(seen).toEqual(s.getErrors());
    s.trackEvent({ event: 'Still Open' });
    await s.flush();
    expect(storedOf('f1').map((e) => e.event)).toEqual(['Before', 'After', 'Still Open']);
    expect(() => s.trackEvent({ event: 'Too Late' })).toThrow(SessionClosedError);
    await c.close();
  });

  it('reports an unreachable service as status -1 for each event, after the retry policy', async () => {
    const c = new Client({ endpoint: 'http://127.0.0.1:9', apiKey: 'k', projectId: 'p', retries: 1 });
    const s = c.createSession({ sessionId: 'n1', deviceId: 'd' });
    s.trackEvent({ event: 'A' });
    s.trackEvent({ event: 'B' });
    await s.flush();
    expect(s.getErrors().map((e) => e.status)).toEqual([-1, -1]);
    expect(s.getErrors()[0]?.message).toMatch(
      /^A \(event_id .{36}\) not confirmed: cannot reach http:\/\/127\.0\.0\.1:9.*; it may have been stored before the answer was lost$/,
    );
    await c.close();
  });

  it('retries through a service that rate-limits and drops connections, storing each event once', async () => {
    const proxy = await startFlakyProxy(server.url, {
      rateLimitEvery: 2,
      dropEvery: 3,
      retryAfterSeconds: 0,
    });
    try {
      const c = new Client({ endpoint: proxy.url, apiKey: 'k', projectId: 'p' });
      const s = c.createSession({ sessionId: 'r1', deviceId: 'd' });
      for (let i = 0; i < 4; i++) {
        s.trackEvent({ event: `E${i}` });
        await s.flushAndContinue();
      }
      await c.close();
      expect(s.getErrors()).toEqual([]);
      expect(storedOf('r1').map((e) => e.event)).toEqual(['E0', 'E1', 'E2', 'E3']);
      expect(proxy.counts.limited + proxy.counts.droppedAfter).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('lets go of a session that sent what it was given (an app that never flushes its sessions grew without bound)', async () => {
    const gc = collector();
    const c = client();
    // Each session made in a frame of its own: a loop's variable may hold its last value past the loop.
    const used = async (i: number): Promise<WeakRef<object>> => {
      const s = c.createSession({ sessionId: `idle${i}`, deviceId: 'd' });
      s.trackEvent({ event: 'Ping' });
      await s.flushAndContinue();
      return new WeakRef(s);
    };
    const refs: Array<WeakRef<object>> = [];
    for (let i = 0; i < 20; i++) refs.push(await used(i));
    // WeakRefs hold their targets until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(refs.flatMap((r, i) => (r.deref() === undefined ? [] : [i]))).toEqual([]);
    expect(storedOf('idle19').map((e) => e.event)).toEqual(['Ping']);
    await c.close();
  });

  it('a session let go when idle is held again at its next call, and refuses calls once the client is closed', async () => {
    const c = client();
    const s = c.createSession({ sessionId: 'again', deviceId: 'd' });
    s.trackEvent({ event: 'First' });
    await s.flushAndContinue();
    s.trackEvent({ event: 'Second' });
    // Not awaited: close() must find the session again and send its event.
    await c.close();
    expect(storedOf('again').map((e) => e.event)).toEqual(['First', 'Second']);
    expect(() => s.trackEvent({ event: 'Late' })).toThrow(SessionClosedError);
    const idle = client();
    const t = idle.createSession({ sessionId: 'never-used', deviceId: 'd' });
    await idle.close();
    expect(() => t.trackEvent({ event: 'Late' })).toThrow(/session.trackEvent: the client is closed/);
  });

  it('close() flushes every session, and the client then refuses new sessions', async () => {
    const c = client();
    const a = c.createSession({ sessionId: 'c1', deviceId: 'd' });
    const b = c.createSession({ sessionId: 'c2', deviceId: 'd' });
    a.trackEvent({ event: 'A' });
    b.trackEvent({ event: 'B' });
    await c.close();
    expect(storedOf('c1').map((e) => e.event)).toEqual(['A']);
    expect(storedOf('c2').map((e) => e.event)).toEqual(['B']);
    expect(() => a.trackEvent({ event: 'x' })).toThrow(SessionClosedError);
    expect(() => c.createSession({ sessionId: 'c3', deviceId: 'd' })).toThrow(SessionClosedError);
    await expect(c.userIdentify({ id: 'u' })).rejects.toThrow(SessionClosedError);
  });
});
