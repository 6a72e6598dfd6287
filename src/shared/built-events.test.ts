import { describe, expect, it } from 'vitest';
import { type AddedFieldMemo, normalizeBuilt } from './built-events.js';
import { parseWireEventRaw } from './events.js';
import { LIMITS } from './limits.js';

/**
 * The importer's events skip the queue route's parser in-process (issue 16); what they cross as must
 * be exactly what that parser would output: the same fields, values and key order.
 */
const rand = (() => {
  let s = 7;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
})();
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
const shuffled = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).sort(() => rand() - 0.5));
const maybe = <T>(v: T): T | undefined => (rand() < 0.5 ? v : undefined);

/** An event as the importer builds it: its fields in any order, some left `undefined`, extras kept. */
function built(i: number): Record<string, unknown> {
  const common = {
    event_id: maybe(`src-${i}`),
    timestamp: maybe(new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString()),
    user_id: `u${i % 7}`,
    device_id: maybe(`d${i % 3}`),
  };
  const session = { session_id: `s${i % 5}`, conversation_id: maybe(`c${i % 2}`) };
  const extras = { plan: pick(['free', 'pro']), score: i, tags: ['a', 'b'], flag: rand() < 0.5 };
  const kind = pick([
    'turn',
    'usage',
    'usage-cost',
    'function',
    'custom',
    'start',
    'end',
    'identify',
    'alias',
    'wire',
  ]);
  switch (kind) {
    case 'turn':
      return shuffled({
        type: 'track',
        event: 'Conversation Turn',
        ...common,
        ...session,
        properties: shuffled({
          user: `q${i}`,
          assistant: `a${i}`,
          assistant_id: maybe('bot'),
          model: maybe('gpt-4o'),
          prompt_tokens: maybe(10),
          completion_tokens: maybe(5),
          cost: maybe(0.01),
          ...extras,
        }),
      });
    case 'usage':
    case 'usage-cost':
      return shuffled({
        type: 'track',
        event: 'Conversation Usage',
        ...common,
        ...session,
        properties: shuffled(
          kind === 'usage'
            ? { model: 'gpt-4o', prompt_tokens: i, completion_tokens: 3, ...extras }
            : { cost: 0.5, model: maybe('x'), ...extras },
        ),
      });
    case 'function':
      return shuffled({
        type: 'track',
        event: 'Conversation Function',
        ...common,
        ...session,
        properties: shuffled({ name: 'search', args: maybe('{"q":1}'), runtime: maybe(12), ...extras }),
      });
    case 'custom':
      return shuffled({
        type: 'track',
        event: `Clicked ${i % 3}`,
        ...common,
        ...session,
        properties: extras,
      });
    case 'start':
      return shuffled({
        type: 'track',
        event: 'Conversation Started',
        ...common,
        ...session,
        attributes: { topic: 'x' },
        properties: maybe({ a: 1 }),
      });
    case 'end':
      return shuffled({ type: 'track', event: 'Conversation Ended', ...common, ...session, properties: {} });
    case 'identify':
      return shuffled({
        type: 'identify',
        ...common,
        user_id: undefined,
        id: `u${i}`,
        session_id: maybe('s1'),
        traits: { plan: 'pro', n: i },
      });
    case 'alias':
      return shuffled({ type: 'alias', event_id: maybe(`al-${i}`), id: `new${i}`, previous_id: `u${i}` });
    default:
      // A wire record: unknown top-level keys, which the parser drops.
      return shuffled({
        type: 'track',
        event: 'Signed Up',
        ...common,
        ...session,
        extra_field: 1,
        other: 'x',
      });
  }
}

/** What the sessionizer adds after the mapping validated the event. */
function sessionized(e: Record<string, unknown>, i: number): Record<string, unknown> {
  const out = { ...e };
  if (out.type !== 'identify' && out.type !== 'alias') {
    out.session_id = rand() < 0.5 ? `s_${'x'.repeat(22)}` : out.session_id;
    if (rand() < 0.5) {
      out.session_key = `u${i % 7}`;
      out.session_gap_ms = 1_800_000;
    }
  }
  out.event_id ??= `imp2-${i.toString(36).padStart(43, '0')}`;
  return out;
}

const topSorted = (o: object | undefined): unknown =>
  o === undefined ? undefined : Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

describe('normalizeBuilt', () => {
  it("outputs what the queue route's parser outputs, nested objects' key order included, for every kind the importer sends", () => {
    const memo: AddedFieldMemo = new Map();
    for (let i = 0; i < 2_000; i++) {
      const e = sessionized(built(i), i);
      const parsed = parseWireEventRaw(e);
      expect(parsed.ok, JSON.stringify(e)).toBe(true);
      const fast = normalizeBuilt(e, LIMITS.eventBytes, memo);
      expect(fast, JSON.stringify(e)).toBeDefined();
      // The JSON of the nested objects, which is stored, keeps their key order; toStrictEqual compares
      // the rest, undefined-valued keys included (the top level's key order is nobody's concern).
      expect(JSON.stringify(topSorted(fast))).toBe(JSON.stringify(topSorted(parsed.ok ? parsed.value : {})));
      expect(fast).toStrictEqual(parsed.ok ? parsed.value : undefined);
    }
  });

  it('leaves to the parser a field the importer added that its schema refuses, the ends it made, and what it cannot bound', () => {
    const base = sessionized(built(1), 1);
    const turn = { ...base, type: 'track', event: 'Clicked' };
    const memo: AddedFieldMemo = new Map();
    expect(normalizeBuilt(turn, LIMITS.eventBytes, memo)).toBeDefined();
    const refused = [
      { ...turn, session_id: 'x'.repeat(LIMITS.idLength + 1) },
      { ...turn, session_key: '' },
      { ...turn, session_gap_ms: 0 },
      { ...turn, event_id: 'abc#session-started' },
      { type: 'end_session', session_id: 's1', provisional: true },
      { ...turn, properties: { text: 'x'.repeat(LIMITS.eventBytes) } },
      { ...turn, properties: JSON.parse('{"__proto__": 1}') },
      { ...turn, type: 'nope' },
      'not an event',
    ];
    for (const e of refused)
      expect(normalizeBuilt(e, LIMITS.eventBytes, memo), JSON.stringify(e)).toBeUndefined();
  });

  it('checks an added value once per batch, and again after another value', () => {
    const memo: AddedFieldMemo = new Map();
    const e = (session: string) => ({
      type: 'track',
      event: 'Clicked',
      session_id: session,
      event_id: 'x1',
      user_id: 'u',
    });
    expect(normalizeBuilt(e('s1'), LIMITS.eventBytes, memo)).toBeDefined();
    expect(memo.get('session_id')).toBe('s1');
    expect(normalizeBuilt(e('y'.repeat(200)), LIMITS.eventBytes, memo)).toBeUndefined();
    expect(memo.get('session_id')).toBe('s1');
  });
});
