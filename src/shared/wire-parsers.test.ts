import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WIRE_EVENT_KINDS, WIRE_EVENT_SCHEMAS, wireErrorMap } from './event-bodies.js';
import { COMPILE_AFTER, wireParser } from './wire-parsers.js';

/** A valid event of each kind, for the generator to break in every way it can. */
const BASE: Record<string, Record<string, unknown>> = {
  start_session: { type: 'start_session', user_id: 'u1', session_id: 's1', attributes: { plan: 'pro' } },
  end_session: { type: 'end_session', user_id: 'u1', session_id: 's1' },
  identify: { type: 'identify', id: 'u1', traits: { email: 'a@b.c', age: 3 } },
  alias: { type: 'alias', id: 'u2', previous_id: 'u1' },
  turn: {
    type: 'track',
    event: 'Conversation Turn',
    user_id: 'u1',
    session_id: 's1',
    timestamp: '2025-01-01T00:00:00.000Z',
    properties: { user: 'hi', assistant: 'hello', model: 'gpt-4o', prompt_tokens: 10, completion_tokens: 5 },
  },
  usage: {
    type: 'track',
    event: 'Conversation Usage',
    user_id: 'u1',
    session_id: 's1',
    properties: { model: 'gpt-4o', prompt_tokens: 10, completion_tokens: 5 },
  },
  function: {
    type: 'track',
    event: 'Conversation Function',
    user_id: 'u1',
    session_id: 's1',
    properties: { name: 'search', args: '{}', result: '[]', runtime_ms: 12 },
  },
  start_conversation: { type: 'track', event: 'Conversation Started', user_id: 'u1', session_id: 's1' },
  end_conversation: { type: 'track', event: 'Conversation Ended', user_id: 'u1', session_id: 's1' },
  custom: { type: 'track', event: 'Clicked', user_id: 'u1', session_id: 's1', properties: { n: 1 } },
};

const value = fc.oneof(
  fc.constantFrom('', 'x', 'x'.repeat(300), '2025-01-01T00:00:00Z', '2025-01-01 00:00', 'Conversation Turn'),
  fc.constantFrom(0, -1, 1.5, 10, Number.NaN, Number.POSITIVE_INFINITY, true, null, undefined),
  fc.constantFrom([], ['a'], [1, 'a'], { a: 1 }, { '': 1 }, { a: { b: 1 } }),
);
const key = fc.constantFrom(
  'user_id',
  'id',
  'session_id',
  'conversation_id',
  'timestamp',
  'event_id',
  'device_id',
  'previous_id',
  'extra',
);
const propKey = fc.constantFrom(
  'user',
  'assistant',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'cached_prompt_tokens',
  'reasoning_tokens',
  'cost',
  'name',
  'args',
  'result',
  'runtime_ms',
  'x',
);

/** A valid event of some kind with top-level and property fields overwritten (or removed). */
const event = fc
  .tuple(
    fc.constantFrom(...WIRE_EVENT_KINDS),
    fc.array(fc.tuple(key, value), { maxLength: 2 }),
    fc.array(fc.tuple(propKey, value), { maxLength: 3 }),
  )
  .map(([kind, top, props]) => {
    const base = BASE[kind]!;
    const properties = { ...((base.properties as object | undefined) ?? {}) } as Record<string, unknown>;
    for (const [k, v] of props) properties[k] = v;
    const e: Record<string, unknown> = { ...base, properties };
    for (const [k, v] of top) e[k] = v;
    return { kind, e };
  });

describe('wireParser', () => {
  it('parses every event as the schema does: the same output, or the same issues and messages', () => {
    const compiled = new Map(WIRE_EVENT_KINDS.map((k) => [k, z.compile(WIRE_EVENT_SCHEMAS[k])]));
    let passed = 0;
    let refused = 0;
    fc.assert(
      fc.property(event, ({ kind, e }) => {
        const want = WIRE_EVENT_SCHEMAS[kind].safeParse(e, { error: wireErrorMap });
        const got = compiled.get(kind)!.safeParse(e, { error: wireErrorMap });
        expect(got.success).toBe(want.success);
        if (want.success) {
          passed++;
          expect(got.data).toStrictEqual(want.data);
          expect(JSON.stringify(got.data)).toBe(JSON.stringify(want.data));
        } else {
          refused++;
          expect(got.error?.issues).toStrictEqual(want.error.issues);
        }
      }),
      { numRuns: 3000 },
    );
    // The generator reaches both sides.
    expect(passed).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('hands out the schema itself at first, then its compiled clone, with the same answers', () => {
    const e = BASE.alias!;
    const first = wireParser('alias');
    expect(first).toBe(WIRE_EVENT_SCHEMAS.alias);
    for (let i = 1; i < COMPILE_AFTER; i++) wireParser('alias');
    const later = wireParser('alias');
    expect(later).not.toBe(WIRE_EVENT_SCHEMAS.alias);
    expect(wireParser('alias')).toBe(later);
    expect(later.safeParse(e)).toStrictEqual(first.safeParse(e));
    const bad = { ...e, previous_id: '' };
    expect(later.safeParse(bad, { error: wireErrorMap }).error?.issues).toStrictEqual(
      first.safeParse(bad, { error: wireErrorMap }).error?.issues,
    );
  });
});
