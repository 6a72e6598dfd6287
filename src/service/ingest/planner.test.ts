import { describe, expect, it } from 'vitest';
import { type WireEvent, wireEventSchema } from '../../shared/events.js';
import { conversationKey } from './conversation-key.js';
import { EventIdFilter, KnownIds } from './known-ids.js';
import { Planner } from './planner.js';
import { ProjectCache } from './project-cache.js';
import type { EventRow } from './rows.js';

const T0 = Date.parse('2025-03-09T12:00:00Z');
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

function freshCache(): ProjectCache {
  const known = () => new KnownIds();
  return new ProjectCache(
    'p',
    {
      events: new EventIdFilter(true),
      sessions: known(),
      conversations: known(),
      ids: known(),
      devices: known(),
      derivedKeys: known(),
    },
    [],
  );
}

function plan(cache: ProjectCache, raw: Array<Record<string, unknown>>, duplicate: boolean[] = []) {
  const events = raw.map((e) => wireEventSchema.parse(e)) as WireEvent[];
  const planner = new Planner(cache, T0 + 999_000);
  planner.plan(
    events,
    events.map((_, i) => duplicate[i] ?? false),
  );
  const rows = planner.slots.filter((s): s is EventRow => !('close' in s));
  return {
    planner,
    rows,
    names: planner.slots.map((s) => ('close' in s ? `[analysis ${s.close.conversation.id}]` : s.event)),
  };
}

const turn = (session: string, s: number, extra: Record<string, unknown> = {}) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: session,
  timestamp: iso(s),
  properties: { user: 'hi', assistant: 'hello' },
  ...extra,
});

describe('Planner: the session and conversation state machine (spec part 3, decisions §4)', () => {
  it('opens session and conversation implicitly at the event time, and closes everything at end_session', () => {
    const cache = freshCache();
    const { planner, rows, names } = plan(cache, [
      turn('s', 10, { device_id: 'd', event_id: 'e1' }),
      {
        type: 'track',
        event: 'Conversation Usage',
        session_id: 's',
        timestamp: iso(11),
        properties: { cost: 0.5 },
      },
      { type: 'end_session', session_id: 's', timestamp: iso(20), event_id: 'e3' },
    ]);
    expect(names).toEqual([
      'Session Started',
      'Conversation Started',
      'Conversation Turn',
      'Conversation Usage',
      'Conversation Ended',
      '[analysis s/1]',
      'Session Ended',
    ]);
    expect(rows[0]).toMatchObject({
      eventId: 'e1#session-started',
      originEventId: 'e1',
      ts: T0 + 10_000,
      type: 'start_session',
    });
    expect(rows[1]).toMatchObject({ eventId: 'e1#conversation-started:s/1', conversationId: 's/1' });
    expect(rows[3]!.eventId).toMatch(/^e_[0-9A-Z]{26}$/);
    expect(rows[4]).toMatchObject({ eventId: 'e3#conversation-ended:s/1', originEventId: 'e3' });
    expect(planner.closes[0]!.conversation.totals).toMatchObject({ turns: 1, cost: 0.5 });
    expect(cache.sessions.get('s')).toMatchObject({ startedAt: T0 + 10_000, endedAt: T0 + 20_000, open: [] });
    expect(planner.accepted).toBe(3);
  });

  it('refuses what the state forbids: ended sessions, closed conversations, a second start', () => {
    const cache = freshCache();
    plan(cache, [
      { type: 'start_session', session_id: 's', user_id: 'u', timestamp: iso(0) },
      turn('s', 1, { conversation_id: 'c' }),
      {
        type: 'track',
        event: 'Conversation Ended',
        session_id: 's',
        conversation_id: 'c',
        timestamp: iso(2),
      },
    ]);
    const { planner } = plan(cache, [
      turn('s', 3, { conversation_id: 'c' }),
      { type: 'start_session', session_id: 's', user_id: 'u' },
      { type: 'end_session', session_id: 's', timestamp: iso(4) },
      turn('s', 5),
    ]);
    expect(planner.conflicts.map((c) => [c.path, c.code])).toEqual([
      ['[0].conversation_id', 'conversation_closed'],
      ['[1].session_id', 'conflict'],
      ['[3].session_id', 'session_ended'],
    ]);
  });

  it('needs conversation_id with several open conversations, and names the next default one', () => {
    const cache = freshCache();
    const { planner } = plan(cache, [
      { type: 'start_session', session_id: 's', device_id: 'd', timestamp: iso(0) },
      { type: 'track', event: 'Conversation Started', session_id: 's', timestamp: iso(1) },
      {
        type: 'track',
        event: 'Conversation Started',
        session_id: 's',
        conversation_id: 'x',
        timestamp: iso(2),
      },
      turn('s', 3),
    ]);
    expect(cache.sessions.get('s')?.open).toEqual(['s/1', 'x']);
    expect(planner.invalid).toEqual([
      { path: '[3].conversation_id', message: 'session "s" has 2 open conversations ("s/1", "x"); name one' },
    ]);
  });

  it('scopes conversation ids to their session: "None" in two sessions is two conversations', () => {
    const cache = freshCache();
    const { planner, rows, names } = plan(cache, [
      turn('a', 1, { device_id: 'd1', conversation_id: 'None' }),
      turn('b', 2, { device_id: 'd2', conversation_id: 'None' }),
      turn('a', 3, { conversation_id: 'None' }),
      { type: 'end_session', session_id: 'a', timestamp: iso(4) },
      turn('b', 5, { conversation_id: 'None' }),
    ]);
    expect([planner.invalid, planner.conflicts]).toEqual([[], []]);
    const a = cache.conversations.get(conversationKey('a', 'None'));
    const b = cache.conversations.get(conversationKey('b', 'None'));
    expect([a?.totals.turns, a?.endedAt]).toEqual([2, T0 + 4_000]);
    expect([b?.totals.turns, b?.endedAt]).toEqual([2, null]);
    expect(rows.filter((r) => r.event === 'Conversation Started').map((r) => r.sessionId)).toEqual([
      'a',
      'b',
    ]);
    expect(names.filter((n) => n.startsWith('[analysis'))).toEqual(['[analysis None]']);
    expect(planner.touched.conversations).toEqual(
      new Set([conversationKey('a', 'None'), conversationKey('b', 'None')]),
    );
  });

  it('identifies an anonymous session when an event names its user, and refuses a second identified user', () => {
    const cache = freshCache();
    const { planner } = plan(cache, [
      { type: 'start_session', session_id: 's', device_id: 'd', timestamp: iso(0) },
      turn('s', 1, { user_id: 'ann' }),
      turn('s', 2, { user_id: 'ben' }),
    ]);
    const maps = cache.identity;
    const session = cache.sessions.get('s')!;
    expect(maps.user(maps.canonical(session.userId)).primaryId).toBe('ann');
    expect(planner.conflicts).toEqual([
      expect.objectContaining({
        path: '[2].user_id',
        message: expect.stringContaining('belongs to user "ann"'),
      }),
    ]);
  });

  it('skips duplicates and counts them', () => {
    const { planner, names } = plan(
      freshCache(),
      [
        { type: 'identify', id: 'a' },
        { type: 'identify', id: 'a' },
      ],
      [false, true],
    );
    expect(names).toEqual(['User Identified']);
    expect([planner.accepted, planner.duplicates]).toEqual([1, 1]);
  });
});
