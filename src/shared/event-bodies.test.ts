import { describe, expect, it } from 'vitest';
import { EVENT_NAMES, parseQueueBody, storedEventName, type WireEvent } from './events.js';

// Cases go through the queue parser so the expected paths show the `[index].field` form of decisions §4.
const TS = '2025-03-09T12:00:00Z';
const turn = (properties: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: 's1',
  properties,
  ...extra,
});

function ok(raw: unknown): WireEvent {
  const r = parseQueueBody([raw]);
  if (!r.ok) throw new Error(`expected valid, got ${JSON.stringify(r.issues)}`);
  expect(r.events).toHaveLength(1);
  return r.events[0]!;
}

function issues(raw: unknown): Array<{ path: string; message: string }> {
  const r = parseQueueBody(raw);
  if (r.ok) throw new Error('expected invalid');
  return r.issues;
}

describe('valid wire events of every kind', () => {
  it('start_session: Python-style id and JS-style user_id both become user_id', () => {
    const py = ok({
      type: 'start_session',
      session_id: 's1',
      id: 'alice',
      timestamp: TS,
      attributes: { plan: 'pro' },
    });
    const js = ok({
      type: 'start_session',
      session_id: 's1',
      user_id: 'alice',
      timestamp: TS,
      attributes: { plan: 'pro' },
    });
    expect(py).toEqual({
      kind: 'start_session',
      type: 'start_session',
      session_id: 's1',
      user_id: 'alice',
      timestamp: TS,
      attributes: { plan: 'pro' },
    });
    expect(js).toEqual(py);
    expect('id' in py).toBe(false);
  });

  it('start_session with only a device id has no user_id key', () => {
    const e = ok({ type: 'start_session', session_id: 's1', device_id: 'd1' });
    expect(e).toEqual({ kind: 'start_session', type: 'start_session', session_id: 's1', device_id: 'd1' });
  });

  it('end_session', () => {
    const e = ok({
      type: 'end_session',
      session_id: 's1',
      timestamp: '2025-03-09T07:00:00-05:00',
      attributes: { n: 2 },
    });
    expect(e).toMatchObject({
      kind: 'end_session',
      timestamp: '2025-03-09T07:00:00-05:00',
      attributes: { n: 2 },
    });
  });

  it('identify with id (Python) or user_id (JS), with traits, session optional', () => {
    const py = ok({
      type: 'identify',
      session_id: 's1',
      id: 'bob',
      device_id: 'd1',
      traits: { age: 30, vip: true },
    });
    const js = ok({ type: 'identify', user_id: 'bob', device_id: 'd1', traits: { age: 30, vip: true } });
    expect(py).toMatchObject({
      kind: 'identify',
      user_id: 'bob',
      device_id: 'd1',
      traits: { age: 30, vip: true },
    });
    expect(js).toMatchObject({ kind: 'identify', user_id: 'bob' });
    expect(ok({ type: 'identify', device_id: 'd1' })).toMatchObject({ kind: 'identify', device_id: 'd1' });
  });

  it('alias: new id in id, or in user_id when id is absent', () => {
    expect(ok({ type: 'alias', id: 'new', previous_id: 'old' })).toEqual({
      kind: 'alias',
      type: 'alias',
      id: 'new',
      previous_id: 'old',
    });
    expect(ok({ type: 'alias', session_id: 's1', user_id: 'new', previous_id: 'old' })).toMatchObject({
      id: 'new',
    });
  });

  it('turn keeps known and extra scalar properties', () => {
    const e = ok(
      turn(
        {
          user: 'hi',
          assistant: 'hello',
          model: 'gpt-4o',
          prompt_tokens: 10,
          completion_tokens: 5,
          intent: 'greet',
        },
        { conversation_id: 'c1', event_id: 'e'.repeat(128), user_id: 'alice', timestamp: TS },
      ),
    );
    expect(e.kind).toBe('turn');
    if (e.kind !== 'turn') return;
    expect(e.properties).toEqual({
      user: 'hi',
      assistant: 'hello',
      model: 'gpt-4o',
      prompt_tokens: 10,
      completion_tokens: 5,
      intent: 'greet',
    });
    expect(e.conversation_id).toBe('c1');
    expect(e.event_id).toHaveLength(128);
  });

  it('usage: token-based and direct forms resolve to a cost form', () => {
    const tokens = ok({
      type: 'track',
      event: 'Conversation Usage',
      session_id: 's1',
      properties: { model: 'gpt-4o', prompt_tokens: 100, completion_tokens: 20 },
    });
    expect(tokens).toMatchObject({
      kind: 'usage',
      usage: { form: 'tokens', model: 'gpt-4o', prompt_tokens: 100, completion_tokens: 20 },
    });
    const direct = ok({
      type: 'track',
      event: 'Conversation Usage',
      session_id: 's1',
      properties: { cost: 0.25 },
    });
    expect(direct).toMatchObject({ kind: 'usage', usage: { form: 'direct', cost: 0.25 } });
    const both = ok({
      type: 'track',
      event: 'Conversation Usage',
      session_id: 's1',
      properties: { model: 'm', prompt_tokens: 1, completion_tokens: 1, cost: 3 },
    });
    expect(both).toMatchObject({ usage: { form: 'direct', cost: 3 } });
  });

  it('function call with name, args, result, runtime and extras', () => {
    const e = ok({
      type: 'track',
      event: 'Conversation Function',
      session_id: 's1',
      properties: { name: 'lookup', args: '{"q":1}', result: '[]', runtime: 12, success: false },
    });
    expect(e).toMatchObject({
      kind: 'function',
      properties: { name: 'lookup', runtime: 12, success: false },
    });
  });

  it('conversation start/end with properties and attributes', () => {
    const start = ok({
      type: 'track',
      event: 'Conversation Started',
      session_id: 's1',
      conversation_id: 'c1',
      attributes: { channel: 'web' },
    });
    expect(start).toMatchObject({ kind: 'start_conversation', attributes: { channel: 'web' } });
    const end = ok({
      type: 'track',
      event: 'Conversation Ended',
      session_id: 's1',
      properties: { rating: 5 },
    });
    expect(end).toMatchObject({ kind: 'end_conversation', properties: { rating: 5 } });
  });

  it('custom events accept array properties and drop unknown top-level fields', () => {
    const e = ok({
      type: 'track',
      event: 'Checkout',
      session_id: 's1',
      properties: { items: ['a', 'b'], amounts: [1, 2] },
      messageId: 'extra',
    });
    expect(e).toEqual({
      kind: 'custom',
      type: 'track',
      event: 'Checkout',
      session_id: 's1',
      properties: { items: ['a', 'b'], amounts: [1, 2] },
    });
  });

  it('storedEventName follows decisions §4', () => {
    expect(storedEventName(ok({ type: 'start_session', session_id: 's', device_id: 'd' }))).toBe(
      'Session Started',
    );
    expect(storedEventName(ok({ type: 'end_session', session_id: 's' }))).toBe(EVENT_NAMES.sessionEnded);
    expect(storedEventName(ok({ type: 'identify', id: 'x' }))).toBe('User Identified');
    expect(storedEventName(ok({ type: 'alias', id: 'x', previous_id: 'y' }))).toBe('User Aliased');
    expect(storedEventName(ok(turn({ user: 'a', assistant: 'b' })))).toBe('Conversation Turn');
  });
});

describe('invalid events name the field', () => {
  it('missing properties.user on a turn', () => {
    expect(issues([turn({ assistant: 'x' })])).toEqual([
      { path: '[0].properties.user', message: 'required' },
    ]);
  });

  it('wrong types read as plain words', () => {
    expect(issues([turn({ user: 1, assistant: 'x', prompt_tokens: 1.5 })])).toEqual([
      { path: '[0].properties.user', message: 'must be a string' },
      { path: '[0].properties.prompt_tokens', message: 'must be an integer' },
    ]);
  });

  it('bad timestamps, including a naive local time', () => {
    for (const ts of ['yesterday', '2025-03-09T12:00:00', '2025-02-30T00:00:00Z']) {
      expect(issues([turn({ user: 'a', assistant: 'b' }, { timestamp: ts })])).toEqual([
        { path: '[0].timestamp', message: 'must be an ISO 8601 time with Z or an offset' },
      ]);
    }
  });

  it('model of 101 characters and negative tokens in a usage event', () => {
    const usage = { type: 'track', event: 'Conversation Usage', session_id: 's1' };
    expect(
      issues([
        usage,
        { ...usage, properties: { model: 'm'.repeat(101), prompt_tokens: -1, completion_tokens: 2 } },
      ]),
    ).toEqual([
      { path: '[0].properties', message: 'required' },
      { path: '[1].properties.model', message: 'must be at most 100 characters' },
      { path: '[1].properties.prompt_tokens', message: 'must be 0 or more' },
    ]);
    expect(issues({ ...usage, properties: { model: 'm', prompt_tokens: 1 } })).toEqual([
      {
        path: '[0].properties.completion_tokens',
        message: 'required with model and tokens (or send cost instead)',
      },
    ]);
    expect(issues({ ...usage, properties: {} })).toEqual([
      { path: '[0].properties', message: 'needs cost, or model with prompt_tokens and completion_tokens' },
    ]);
  });

  it('costs, tokens and runtimes too large to sum exactly', () => {
    // Two turns of 1.7e308 each summed to Infinity in their conversation's summary (JSON null).
    expect(issues([turn({ user: 'a', assistant: 'b', cost: 1.7e308, prompt_tokens: 1e9 + 1 })])).toEqual([
      { path: '[0].properties.prompt_tokens', message: 'must be at most 1,000,000,000' },
      { path: '[0].properties.cost', message: 'must be at most 1,000,000 (in US dollars)' },
    ]);
    const atMost = turn({ user: 'a', assistant: 'b', cost: 1e6, prompt_tokens: 1e9 });
    expect(parseQueueBody([atMost]).ok).toBe(true);
  });

  it('__proto__, constructor and prototype keys anywhere, even in ignored fields', () => {
    const raw = JSON.parse(
      '[{"type":"track","event":"X","session_id":"s","properties":{"__proto__":{"polluted":true}}},' +
        '{"type":"identify","id":"u","traits":{"constructor":1}},' +
        '{"type":"identify","id":"u","extra":[{"prototype":2}]}]',
    ) as unknown;
    expect(issues(raw)).toEqual([
      { path: '[0].properties.__proto__', message: 'key "__proto__" is not allowed' },
      { path: '[1].traits.constructor', message: 'key "constructor" is not allowed' },
      { path: '[2].extra[0].prototype', message: 'key "prototype" is not allowed' },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('201 property keys on a custom event and on a turn', () => {
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i]));
    const custom = { type: 'track', event: 'X', session_id: 's', properties: many };
    expect(issues(custom)).toEqual([{ path: '[0].properties', message: 'at most 200 keys are allowed' }]);
    const big = Object.fromEntries(Array.from({ length: 199 }, (_, i) => [`k${i}`, i]));
    expect(issues(turn({ ...big, user: 'a', assistant: 'b' }))).toEqual([
      { path: '[0].properties', message: 'at most 200 keys are allowed' },
    ]);
    expect(
      ok(turn({ ...Object.fromEntries(Object.entries(big).slice(1)), user: 'a', assistant: 'b' })).kind,
    ).toBe('turn');
  });

  it('key limits on turn properties are reported beside field errors', () => {
    const extras = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]));
    expect(issues(turn({ ...extras, assistant: 'b' }))).toEqual([
      { path: '[0].properties.user', message: 'required' },
      { path: '[0].properties', message: 'at most 200 keys are allowed' },
    ]);
    expect(issues(turn({ user: 'a', assistant: 'b', ['k'.repeat(101)]: 1 }))).toEqual([
      { path: `[0].properties.${'k'.repeat(101)}`, message: 'keys must be 1 to 100 characters' },
    ]);
    // Characters, as ids count them: 100 emoji (200 UTF-16 units) pass, 101 do not.
    const emoji = (n: number) => '😀'.repeat(n);
    expect(ok(turn({ user: 'a', assistant: 'b', [emoji(100)]: 1 })).kind).toBe('turn');
    expect(ok({ type: 'identify', id: emoji(100), traits: { [emoji(100)]: 1 } }).kind).toBe('identify');
    expect(issues(turn({ user: 'a', assistant: 'b', [emoji(101)]: 1 }))).toEqual([
      { path: `[0].properties.${emoji(101)}`, message: 'keys must be 1 to 100 characters' },
    ]);
    expect(issues({ type: 'identify', id: 'x', traits: { [emoji(101)]: 1 } })).toEqual([
      { path: `[0].traits.${emoji(101)}`, message: 'keys must be 1 to 100 characters' },
    ]);
  });

  it('property values must be scalars or flat arrays; traits scalars only', () => {
    expect(
      issues({ type: 'track', event: 'X', session_id: 's', properties: { a: null, b: { c: 1 } } }),
    ).toEqual([
      {
        path: '[0].properties.a',
        message: 'must be a string, number, boolean, or an array of strings or of numbers',
      },
      {
        path: '[0].properties.b',
        message: 'must be a string, number, boolean, or an array of strings or of numbers',
      },
    ]);
    expect(issues({ type: 'identify', id: 'u', traits: { tags: ['a'] } })).toEqual([
      { path: '[0].traits.tags', message: 'must be a string, number or boolean' },
    ]);
    // An array whose items are the wrong kind: told what its items must be (it was told to be a
    // string, number or boolean, which [true] holds: found by probing).
    const arrays = { flags: [true, false], mixed: [1, 'x'] };
    expect(issues({ type: 'track', event: 'X', session_id: 's', properties: arrays })).toEqual([
      { path: '[0].properties.flags', message: 'must be an array of strings only or of numbers only' },
      { path: '[0].properties.mixed', message: 'must be an array of strings only or of numbers only' },
    ]);
  });

  it('type and event dispatch give one precise issue', () => {
    expect(issues({ session_id: 's' })).toEqual([
      { path: '[0].type', message: 'required: one of start_session, end_session, identify, alias, track' },
    ]);
    expect(issues({ type: 'page' })[0]).toEqual({
      path: '[0].type',
      message: 'must be one of start_session, end_session, identify, alias, track',
    });
    expect(issues({ type: 'track', session_id: 's' })).toEqual([
      { path: '[0].event', message: 'required for type "track": the event name' },
    ]);
    expect(issues({ type: 'track', event: 'Session Ended', session_id: 's' })).toEqual([
      { path: '[0].event', message: '"Session Ended" is reserved: send type "end_session" instead' },
    ]);
    // Stored, it reached live sockets looking like a refusal, which onEvent reported as an error.
    expect(issues({ type: 'track', event: 'MLError', session_id: 's' })).toEqual([
      {
        path: '[0].event',
        message: '"MLError" is reserved: live events report refused requests by that name',
      },
    ]);
    // A turn's intent label: an intent of that name was made, which no filter could name apart.
    for (const label of ['Any Intent', ' any intent ']) {
      expect(issues(turn({ user: 'a', assistant: 'b', intent: label }))).toEqual([
        {
          path: '[0].properties.intent',
          message: '"Any Intent" is reserved: filters use it for every intent',
        },
      ]);
    }
    expect(ok(turn({ user: 'a', assistant: 'b', intent: 'Any Intents' })).kind).toBe('turn');
  });

  it('identity rules: someone to attach to, and id/user_id agreeing', () => {
    expect(issues({ type: 'start_session', session_id: 's' })).toEqual([
      { path: '[0].user_id', message: 'required: user_id (or id) or device_id' },
    ]);
    expect(issues({ type: 'identify', id: 'a', user_id: 'b' })).toEqual([
      { path: '[0].user_id', message: 'differs from id "a"; name the user once' },
    ]);
    expect(issues({ type: 'alias', previous_id: 'old' })).toEqual([
      { path: '[0].id', message: 'required: the new id' },
    ]);
    expect(issues({ type: 'end_session', session_id: '' })).toEqual([
      { path: '[0].session_id', message: 'must not be empty' },
    ]);
  });

  it('function args must be text', () => {
    const fn = { type: 'track', event: 'Conversation Function', session_id: 's' };
    expect(issues({ ...fn, properties: { args: { q: 1 }, runtime: 2.5 } })).toEqual([
      { path: '[0].properties.name', message: 'required' },
      { path: '[0].properties.args', message: 'must be a string (JSON-encode structured values)' },
      { path: '[0].properties.runtime', message: 'must be a whole number of milliseconds' },
    ]);
  });
});
