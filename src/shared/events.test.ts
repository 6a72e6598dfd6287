import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  EVENT_ROUTE_NAMES,
  eventRouteInputSchema,
  eventRouteSchemas,
  liveEventsResponseSchema,
  parseQueueBody,
  parseRouteEvent,
  queueBodySchema,
  queueResponseSchema,
  routeResponseSchema,
  scanJson,
  wireEventSchema,
} from './events.js';
import { LIMITS } from './limits.js';

const TS = '2025-03-09T12:00:00Z';
const turn = (properties: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: 's1',
  properties,
  ...extra,
});

function issues(raw: unknown): Array<{ path: string; message: string }> {
  const r = parseQueueBody(raw);
  if (r.ok) throw new Error('expected invalid');
  return r.issues;
}

describe('queue body', () => {
  const valid = { type: 'identify', id: 'u' };

  it('accepts a single object as a one-event batch', () => {
    const r = parseQueueBody(valid);
    expect(r).toEqual({ ok: true, events: [{ kind: 'identify', type: 'identify', user_id: 'u' }] });
  });

  it('accepts exactly the limit and rejects 2001 events without validating them', () => {
    const atLimit = parseQueueBody(Array.from({ length: LIMITS.eventsPerRequest }, () => valid));
    expect(atLimit.ok && atLimit.events.length).toBe(2000);
    expect(issues(Array.from({ length: 2001 }, () => ({})))).toEqual([
      { path: '', message: 'at most 2000 events per request (got 2001)' },
    ]);
  });

  it('rejects an empty array and non-object bodies or elements', () => {
    expect(issues([])).toEqual([{ path: '', message: 'must hold at least one event' }]);
    expect(issues('x')).toEqual([
      { path: '', message: 'must be a JSON array of events or one event object' },
    ]);
    expect(issues([valid, 'x', null, [valid]])).toEqual([
      { path: '[1]', message: 'must be an event object' },
      { path: '[2]', message: 'must be an event object' },
      { path: '[3]', message: 'must be an event object' },
    ]);
  });

  it('reports every bad element by index and stores none', () => {
    const r = parseQueueBody([valid, turn({ assistant: 'x' }), valid, { type: 'identify' }]);
    expect(r).toEqual({
      ok: false,
      issues: [
        { path: '[1].properties.user', message: 'required' },
        { path: '[3].user_id', message: 'required: user_id (or id) or device_id' },
      ],
    });
  });

  it('checks each serialized event against the byte limit', () => {
    const big = turn({ user: 'x'.repeat(200), assistant: 'y' });
    expect(parseQueueBody([big], { eventBytes: 1000 }).ok).toBe(true);
    const r = parseQueueBody([valid, big], { eventBytes: 200 });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.issues).toEqual([
        { path: '[1]', message: expect.stringMatching(/^event is \d+ bytes; at most 200 allowed$/) },
      ]);
    // The real limit: a 1 MiB utterance plus its envelope is over.
    expect(issues([turn({ user: 'é'.repeat(LIMITS.eventBytes / 2), assistant: '' })])[0]?.path).toBe('[0]');
  });

  it('skips the per-event scan only when the checked body text is too small to hold a big event', () => {
    const big = turn({ user: 'x'.repeat(300), assistant: 'y' });
    const body = [valid, big];
    const bytes = JSON.stringify(body).length;
    // The body text was checked and is under half the limit: no event can be over it, no scan.
    expect(parseQueueBody(body, { eventBytes: 2 * bytes, checkedBytes: bytes }).ok).toBe(true);
    // A claim that does not rule a big event out leaves the scan on, and the big event is refused.
    const scanned = parseQueueBody(body, { eventBytes: 300, checkedBytes: bytes });
    expect(!scanned.ok && scanned.issues.map((i) => i.path)).toEqual(['[1]']);
    // What the scan would refuse shows the skip is real: a caller's checked size is trusted.
    expect(parseQueueBody(body, { eventBytes: 300, checkedBytes: 150 }).ok).toBe(true);
  });

  it('gives the same answer with or without a checked size, for any body the scan passes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ type: fc.constant('identify'), id: fc.string({ minLength: 1, maxLength: 20 }) }),
            fc.record({
              type: fc.constant('track'),
              event: fc.constantFrom('Conversation Turn', 'Clicked'),
              session_id: fc.constant('s1'),
              properties: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer())),
            }),
          ),
          { minLength: 1, maxLength: 20 },
        ),
        (body) => {
          const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
          expect(parseQueueBody(body, { checkedBytes: bytes })).toEqual(parseQueueBody(body));
        },
      ),
    );
  });

  it('caps the issue list so a wholly bad batch stays readable', () => {
    const r = parseQueueBody(
      Array.from({ length: 150 }, () => ({ type: 'nope' })),
      { maxIssues: 10 },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toHaveLength(11);
    expect(r.issues[10]).toEqual({ path: '', message: '140 more issues not shown' });
  });

  it('queueBodySchema gives the same paths through zod', () => {
    const r = queueBodySchema.safeParse([valid, turn({ assistant: 'x' })]);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path, i.message])).toEqual([
      [[1, 'properties', 'user'], 'required'],
    ]);
    expect(queueBodySchema.parse(valid)).toHaveLength(1);
  });
});

describe('per-event routes', () => {
  it('has a schema for every documented route', () => {
    expect(EVENT_ROUTE_NAMES.sort()).toEqual(
      [
        'alias',
        'conversation-function',
        'conversation-turn',
        'conversation-usage',
        'end-conversation',
        'end-session',
        'event',
        'identify',
        'start-conversation',
        'start-session',
        'track',
      ].sort(),
    );
  });

  it('/conversation-turn takes only turns and says so', () => {
    expect(parseRouteEvent('conversation-turn', turn({ user: 'a', assistant: 'b' })).ok).toBe(true);
    expect(
      parseRouteEvent('conversation-turn', { type: 'track', event: 'Checkout', session_id: 's' }),
    ).toEqual({
      ok: false,
      issues: [
        {
          path: 'event',
          message:
            'this route takes only type "track" with event "Conversation Turn"; send other events to /bc/v1/events/event',
        },
      ],
    });
    expect(parseRouteEvent('conversation-turn', { type: 'identify', id: 'u' })).toMatchObject({
      ok: false,
      issues: [{ path: 'type' }],
    });
  });

  it('single-kind routes fill in an omitted type and event', () => {
    const r = parseRouteEvent('conversation-usage', { session_id: 's', properties: { cost: 1 } });
    expect(r).toMatchObject({
      ok: true,
      value: { kind: 'usage', type: 'track', event: 'Conversation Usage' },
    });
    expect(parseRouteEvent('start-session', { session_id: 's', id: 'u' })).toMatchObject({
      ok: true,
      value: { kind: 'start_session', user_id: 'u' },
    });
  });

  it('/track takes any track event but no other type; /event takes everything', () => {
    expect(parseRouteEvent('track', { type: 'track', event: 'Checkout', session_id: 's' }).ok).toBe(true);
    expect(parseRouteEvent('track', turn({ user: 'a', assistant: 'b' })).ok).toBe(true);
    expect(parseRouteEvent('track', { type: 'alias', id: 'a', previous_id: 'b' })).toMatchObject({
      ok: false,
      issues: [{ path: 'type', message: expect.stringContaining('takes only type "track"') }],
    });
    expect(parseRouteEvent('event', { type: 'alias', id: 'a', previous_id: 'b' }).ok).toBe(true);
    expect(parseRouteEvent('event', turn({ assistant: 'b' }))).toEqual({
      ok: false,
      issues: [{ path: 'properties.user', message: 'required' }],
    });
  });

  it('route zod schemas and wireEventSchema return the normalized event', () => {
    expect(eventRouteSchemas['conversation-turn'].parse(turn({ user: 'a', assistant: 'b' })).kind).toBe(
      'turn',
    );
    expect(eventRouteSchemas.identify.safeParse({ type: 'alias', id: 'a', previous_id: 'b' }).success).toBe(
      false,
    );
    expect(wireEventSchema.parse({ type: 'end_session', session_id: 's' }).kind).toBe('end_session');
    const nested = z.object({ event: wireEventSchema }).safeParse({ event: turn({}) });
    expect(nested.error?.issues.map((i) => i.path.join('.'))).toEqual([
      'event.properties.user',
      'event.properties.assistant',
    ]);
  });

  it('input schemas render as JSON Schema for the generated OpenAPI', () => {
    const json: unknown = z.toJSONSchema(eventRouteInputSchema('conversation-turn'), { io: 'input' });
    expect(json).toMatchObject({
      required: expect.arrayContaining(['type', 'event', 'session_id', 'properties']),
      properties: { properties: { required: ['user', 'assistant'] } },
    });
    const any: unknown = z.toJSONSchema(eventRouteInputSchema('event'), { io: 'input' });
    expect(any).toMatchObject({ anyOf: expect.any(Array) });
    expect((any as { anyOf: unknown[] }).anyOf).toHaveLength(10);
  });
});

describe('response schemas', () => {
  it('queue response', () => {
    expect(queueResponseSchema.safeParse({ status: 'ok', accepted: 3, duplicates: 1 }).success).toBe(true);
    expect(queueResponseSchema.safeParse({ status: 'ok' }).success).toBe(false);
  });

  it('per-event route answer keeps extra fields', () => {
    const r = routeResponseSchema.parse([
      { type: 'start_session', event: 'Session Started', session_id: 's', timestamp: TS, user_id: 'u' },
      {
        type: 'track',
        event: 'Conversation Turn',
        session_id: 's',
        timestamp: TS,
        properties: { user: 'a' },
        x: 1,
      },
    ]);
    expect(r[1]).toMatchObject({ x: 1, properties: { user: 'a' } });
  });

  it('live events envelope', () => {
    const row = {
      organization_id: 'o',
      app_id: 'a',
      session_id: 's',
      user_id: 'u',
      event_id: 'e',
      origin_event_id: 'e0',
      timestamp: TS,
      event: 'Conversation Summary',
      properties: { intents: ['greet'], cost: 0.1 },
      user_traits: { plan: 'pro' },
    };
    expect(liveEventsResponseSchema.parse([row])).toEqual([row]);
    expect(liveEventsResponseSchema.safeParse([{ ...row, event_id: undefined }]).success).toBe(false);
  });
});

describe('scanJson', () => {
  it('measures exactly what JSON.stringify writes, in UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(scanJson(v).bytes).toBe(Buffer.byteLength(JSON.stringify(v), 'utf8'));
      }),
      { numRuns: 300 },
    );
  });

  it('lists forbidden keys, nested ones too, in document order with full paths', () => {
    const v = JSON.parse(
      '{"a":{"b":[{"__proto__":1}]},"prototype":{"constructor":2},"c":{"constructor":3}}',
    ) as unknown;
    expect(scanJson(v).forbidden.map((i) => i.path)).toEqual([
      ['a', 'b', 0, '__proto__'],
      ['prototype'],
      ['prototype', 'constructor'],
      ['c', 'constructor'],
    ]);
  });

  it('survives nesting far deeper than JSON.stringify can handle', () => {
    const depth = 100_000;
    const v = JSON.parse(`${'['.repeat(depth)}{"__proto__":0}${']'.repeat(depth)}`) as unknown;
    const { forbidden } = scanJson(v);
    expect(forbidden).toHaveLength(1);
    expect(forbidden[0]?.path).toHaveLength(depth + 1);
    expect(issues({ type: 'identify', id: 'u', extra: v })[0]?.message).toBe(
      'key "__proto__" is not allowed',
    );
  });
});

describe('scanJson fast and slow paths agree', () => {
  it('on values that mention a forbidden name as a value, or nest deeper than JSON.stringify can go', () => {
    const mention = { note: '"constructor"', list: ['prototype'] };
    expect(scanJson(mention)).toEqual({ bytes: Buffer.byteLength(JSON.stringify(mention)), forbidden: [] });
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(scanJson(deep).bytes).toBe(400_001);
    expect(scanJson({ big: 1n }).bytes).toBe(12);
  });
});
