import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveEventsResponseSchema } from '../src/shared/events.js';
import {
  engagementSchema,
  newIntentsSchema,
  topIntentsSchema,
  userConversationsSchema,
  userSentimentSchema,
} from '../src/shared/summaries.js';
import { call, ok, withQuery } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * The /summary/* routes on hand-made conversations sent through /events/queue: every expected value
 * is computed here from the plan below (when each conversation started and closed, its turns, its
 * labelled intents and the mood of its user texts), never copied from an answer.
 */

type Mood = 'positive' | 'negative' | 'neutral';
const TEXT: Record<Mood, string> = {
  positive: 'Thanks, this is great, I love it',
  negative: 'This is terrible and awful, I hate it',
  neutral: 'Send the invoice to the office on Monday',
};

interface ConvPlan {
  id: string;
  mood: Mood;
  /** One turn per element: its `intent` label, or none. */
  labels: Array<string | undefined>;
  /** How the conversation closes: its own Conversation Ended, the session's end, or not at all. */
  close: 'ended' | 'session' | 'open';
}
interface SessionPlan {
  id: string;
  user: string;
  start: string;
  /** Seconds between consecutive events of the session. */
  gap: number;
  convs: ConvPlan[];
  end: boolean;
}

const PLAN: SessionPlan[] = [
  // The range before the summaries' range (for delta_percent).
  {
    id: 'a1',
    user: 'alice',
    start: '2025-02-20T10:00:00Z',
    gap: 20,
    end: true,
    convs: [{ id: 'a1c1', mood: 'positive', labels: ['refund', undefined], close: 'session' }],
  },
  // First week (Tokyo).
  {
    id: 'a2',
    user: 'alice',
    start: '2025-03-04T10:00:00Z',
    gap: 15,
    end: true,
    convs: [
      { id: 'a2c1', mood: 'negative', labels: ['refund', 'cancel', 'refund'], close: 'ended' },
      { id: 'a2c2', mood: 'neutral', labels: [undefined], close: 'session' },
    ],
  },
  // Starts on Sunday 23:45 in Tokyo (week 1), its conversation closes after midnight (week 2).
  {
    id: 'b1',
    user: 'bob',
    start: '2025-03-09T14:45:00Z',
    gap: 600,
    end: true,
    convs: [{ id: 'b1c1', mood: 'positive', labels: ['greeting', 'refund'], close: 'ended' }],
  },
  // Second week.
  {
    id: 'a3',
    user: 'alice',
    start: '2025-03-11T01:00:00Z',
    gap: 40,
    end: true,
    convs: [{ id: 'a3c1', mood: 'positive', labels: [undefined, undefined, undefined], close: 'ended' }],
  },
  {
    id: 'c1',
    user: 'carol',
    start: '2025-03-12T03:00:00Z',
    gap: 30,
    end: false,
    convs: [
      { id: 'c1c1', mood: 'negative', labels: ['cancel'], close: 'ended' },
      { id: 'c1c2', mood: 'positive', labels: ['greeting', undefined], close: 'open' },
    ],
  },
  // After the range.
  {
    id: 'd1',
    user: 'dave',
    start: '2025-03-20T09:00:00Z',
    gap: 10,
    end: true,
    convs: [{ id: 'd1c1', mood: 'negative', labels: ['escalate'], close: 'session' }],
  },
];

interface Conv {
  session: string;
  id: string;
  user: string;
  mood: Mood;
  started: number;
  /** When its Conversation Summary is recorded; undefined while open. */
  closed: number | undefined;
  turns: number;
  /** Distinct labels, first occurrence first. */
  intents: string[];
}

/** The wire events of the plan, each with the person it is about, and the conversations it makes. */
function build(plan: SessionPlan[]) {
  const events: Array<Record<string, unknown> & { timestamp: string }> = [];
  const times: Array<{ user: string; ts: number }> = [];
  const convs: Conv[] = [];
  for (const s of plan) {
    let t = Date.parse(s.start);
    const push = (e: Record<string, unknown>) => {
      const ts = new Date(t).toISOString();
      events.push({ ...e, session_id: s.id, timestamp: ts });
      times.push({ user: s.user, ts: t });
    };
    push({ type: 'start_session', user_id: s.user });
    const open: Conv[] = [];
    for (const c of s.convs) {
      const conv: Conv = {
        session: s.id,
        id: c.id,
        user: s.user,
        mood: c.mood,
        started: 0,
        closed: undefined,
        turns: c.labels.length,
        intents: [...new Set(c.labels.filter((l): l is string => l !== undefined))],
      };
      c.labels.forEach((label, i) => {
        t += s.gap * 1000;
        if (i === 0) conv.started = t;
        push({
          type: 'track',
          event: 'Conversation Turn',
          conversation_id: c.id,
          properties: { user: TEXT[c.mood], assistant: 'Noted.', ...(label ? { intent: label } : {}) },
        });
      });
      if (c.close === 'ended') {
        t += s.gap * 1000;
        push({ type: 'track', event: 'Conversation Ended', conversation_id: c.id });
        conv.closed = t;
      } else if (c.close === 'session') open.push(conv);
      convs.push(conv);
    }
    if (s.end) {
      t += s.gap * 1000;
      push({ type: 'end_session' });
      for (const c of open) c.closed = t;
    }
  }
  return { events, times, convs };
}

const { events: SENT, times: TIMES, convs: CONVS } = build(PLAN);

// Weekly bins in Tokyo (UTC+9 all year): Monday 3 and Monday 10 March; the range before is as long.
const TZ = 'Asia/Tokyo';
const range = {
  start: '2025-03-03T00:00:00+09:00',
  end: '2025-03-17T00:00:00+09:00',
  period: 'week',
  tz: TZ,
};
const LO = Date.parse(range.start);
const HI = Date.parse(range.end);
const WEEK = 7 * 86_400_000;
const BINS = [0, 1].map((i) => ({ lo: LO + i * WEEK, hi: LO + (i + 1) * WEEK }));
const PREVIOUS = { lo: LO - (HI - LO), hi: LO };
const BIN_EDGES = [
  { start: '2025-03-03T00:00:00+09:00', end: '2025-03-10T00:00:00+09:00' },
  { start: '2025-03-10T00:00:00+09:00', end: '2025-03-17T00:00:00+09:00' },
];
type Window = { lo: number; hi: number };
const inside = (w: Window, ts: number | undefined) => ts !== undefined && ts >= w.lo && ts < w.hi;

let t: TestService;
beforeAll(async () => {
  t = await startTestService(undefined, { limits: { chartRatePerSecond: 10_000, chartBurst: 10_000 } });
  const res = await call(t, 'POST', '/bc/v1/events/queue', SENT);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
});
afterAll(() => t.stop());

const summary = (path: string, query: Record<string, unknown> = {}) =>
  ok(t, `/bc/v1/summary/${path}`, { range, ...query });
const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const delta = (now: number, before: number) => (before === 0 ? 0 : ((now - before) / before) * 100);
const closedIn = (w: Window, scope: (c: Conv) => boolean = () => true) =>
  CONVS.filter((c) => inside(w, c.closed) && scope(c));

/** Intent counts (one per conversation), most frequent first, ties by name. */
function intentCounts(convs: Conv[]) {
  const counts = new Map<string, number>();
  for (const c of convs) for (const i of c.intents) counts.set(i, (counts.get(i) ?? 0) + 1);
  return [...counts]
    .map(([intent, count]) => ({ intent, count }))
    .sort((a, b) => b.count - a.count || (a.intent < b.intent ? -1 : 1));
}

describe('the plan as stored (premises of the expectations below)', () => {
  it('each closed conversation has one summary with the planned turns, duration, intents and sentiment', async () => {
    const res = await call(t, 'GET', '/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&limit=10000');
    expect(res.status).toBe(200);
    const summaries = liveEventsResponseSchema
      .parse(res.json)
      .filter((e) => e.event === 'Conversation Summary')
      .map((e) => ({
        id: e.conversation_id,
        ts: Date.parse(e.timestamp),
        turns: e.properties?.turns,
        duration_s: e.properties?.duration_s,
        intents: e.properties?.intents,
        sentiment: e.properties?.sentiment,
      }))
      .sort((a, b) => String(a.id).localeCompare(String(b.id)));
    const closed = CONVS.filter((c) => c.closed !== undefined);
    expect(summaries).toEqual(
      closed
        .map((c) => ({
          id: c.id,
          ts: c.closed,
          turns: c.turns,
          duration_s: ((c.closed ?? 0) - c.started) / 1000,
          intents: c.intents,
          sentiment: c.mood,
        }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    );
  });
});

describe('GET /summary/top-intents', () => {
  it('counts intents of the conversations that closed in the range, most frequent first', async () => {
    const expected = intentCounts(closedIn({ lo: LO, hi: HI }));
    expect(expected.map((x) => x.intent)).not.toContain('escalate'); // dave's is after the range
    expect(topIntentsSchema.parse(await summary('top-intents'))).toEqual(expected);
  });

  it('scopes to one session or one conversation', async () => {
    const bySession = topIntentsSchema.parse(await summary('top-intents', { session_id: 'a2' }));
    expect(bySession).toEqual(intentCounts(closedIn({ lo: LO, hi: HI }, (c) => c.session === 'a2')));
    const byConversation = topIntentsSchema.parse(await summary('top-intents', { conversation_id: 'b1c1' }));
    expect(byConversation).toEqual(intentCounts(closedIn({ lo: LO, hi: HI }, (c) => c.id === 'b1c1')));
    expect(byConversation.map((x) => x.intent)).toEqual(['greeting', 'refund']);
  });

  it('takes the range in bracket form as in JSON', async () => {
    const bracket = Object.entries(range)
      .map(([k, v]) => `range[${k}]=${encodeURIComponent(v)}`)
      .join('&');
    const res = await call(t, 'GET', `/bc/v1/summary/top-intents?${bracket}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual(await summary('top-intents'));
  });
});

describe('GET /summary/user-sentiment', () => {
  it('one slice per sentiment, counting conversations whose summary is in the range', async () => {
    const convs = closedIn({ lo: LO, hi: HI });
    const n = (m: Mood) => convs.filter((c) => c.mood === m).length;
    const pct = (m: Mood) => (100 * n(m)) / convs.length;
    const body = userSentimentSchema.parse(await summary('user-sentiment'));
    expect(body.slices).toEqual(
      (['positive', 'neutral', 'negative'] as const).map((label) => ({
        label,
        value: n(label),
        percent: expect.closeTo(pct(label), 9),
      })),
    );
    expect(body.highlights).toEqual({
      positive_total: n('positive'),
      positive_percent: expect.closeTo(pct('positive'), 9),
      negative_total: n('negative'),
      negative_percent: expect.closeTo(pct('negative'), 9),
      neutral_total: n('neutral'),
      neutral_percent: expect.closeTo(pct('neutral'), 9),
    });
    expect(n('positive') * n('negative') * n('neutral')).toBeGreaterThan(0);
  });

  it('scoped to one session; zeros (not NaN) for an empty scope', async () => {
    const body = userSentimentSchema.parse(await summary('user-sentiment', { session_id: 'a2' }));
    expect(body.slices.map((s) => [s.label, s.value])).toEqual([
      ['positive', 0],
      ['neutral', 1],
      ['negative', 1],
    ]);
    const empty = userSentimentSchema.parse(await summary('user-sentiment', { session_id: 'nope' }));
    expect(empty.slices.map((s) => [s.value, s.percent])).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
  });
});

describe('GET /summary/user-conversations', () => {
  it('per bin: users, first-time users, conversations and means of the conversations that closed there', async () => {
    const body = userConversationsSchema.parse(await summary('user-conversations'));
    const inRange = closedIn({ lo: LO, hi: HI });
    const firstClose = new Map<string, number>();
    for (const c of inRange)
      firstClose.set(c.user, Math.min(firstClose.get(c.user) ?? Infinity, c.closed ?? 0));
    const expected = BINS.map((bin, i) => {
      const convs = closedIn(bin);
      const users = new Set(convs.map((c) => c.user));
      return {
        ...BIN_EDGES[i],
        user_count: users.size,
        unique_user_count: [...users].filter((u) => inside(bin, firstClose.get(u))).length,
        conversation_count: convs.length,
        average_duration: expect.closeTo(mean(convs.map((c) => (c.closed ?? 0) - c.started)), 6),
        average_prompt_count: expect.closeTo(mean(convs.map((c) => c.turns)), 9),
        average_intents_per_conversation: expect.closeTo(mean(convs.map((c) => c.intents.length)), 9),
      };
    });
    expect(body.chart_name).toBe('User Conversations');
    expect(body.points).toEqual(expected);
    // alice closes conversations in both weeks: counted in both, new only in the first.
    expect(body.points[1]?.user_count).toBeGreaterThan(body.points[1]?.unique_user_count ?? 0);
  });

  it('highlights: means over the range and their change from the range before', async () => {
    const body = userConversationsSchema.parse(await summary('user-conversations'));
    const now = closedIn({ lo: LO, hi: HI });
    const before = closedIn(PREVIOUS);
    expect(before.length).toBeGreaterThan(0);
    const h = (f: (c: Conv) => number) => ({
      value: expect.closeTo(mean(now.map(f)), 6),
      delta_percent: expect.closeTo(delta(mean(now.map(f)), mean(before.map(f))), 6),
    });
    expect(body.highlights).toEqual({
      average_duration: h((c) => (c.closed ?? 0) - c.started),
      average_prompt_count: h((c) => c.turns),
      average_intents_per_conversation: h((c) => c.intents.length),
    });
  });

  it('scoped to one conversation', async () => {
    const body = userConversationsSchema.parse(
      await summary('user-conversations', { conversation_id: 'b1c1' }),
    );
    const b1c1 = CONVS.find((c) => c.id === 'b1c1');
    expect(body.points.map((p) => p.conversation_count)).toEqual(
      BINS.map((b) => (inside(b, b1c1?.closed) ? 1 : 0)),
    );
  });
});

describe('GET /summary/engagement', () => {
  const usersIn = (w: Window) => new Set(TIMES.filter((x) => inside(w, x.ts)).map((x) => x.user));
  /** created_at: the earliest time seen for the user (decisions §3). */
  const created = new Map<string, number>();
  for (const x of TIMES) created.set(x.user, Math.min(created.get(x.user) ?? Infinity, x.ts));
  const newIn = (w: Window) => [...created].filter(([, ts]) => inside(w, ts)).length;
  const startedIn = (w: Window) => CONVS.filter((c) => inside(w, c.started)).length;
  const intentsIn = (w: Window) => closedIn(w).reduce((n, c) => n + c.intents.length, 0);

  it('per bin: active users (any event), new users, conversations started, intents found', async () => {
    const body = engagementSchema.parse(await summary('engagement'));
    expect(body.chart_name).toBe('Engagement');
    expect(body.points).toEqual(
      BINS.map((bin, i) => ({
        ...BIN_EDGES[i],
        user_count: usersIn(bin).size,
        new_user_count: newIn(bin),
        conversation_count: startedIn(bin),
        intent_count: intentsIn(bin),
      })),
    );
    // bob's conversation started in week 1 and its intents were found in week 2.
    expect(startedIn(BINS[0]!)).toBe(CONVS.filter((c) => c.session === 'a2' || c.session === 'b1').length);
  });

  it('highlights: totals over the range (distinct users) and their change from the range before', async () => {
    const body = engagementSchema.parse(await summary('engagement'));
    const now = { lo: LO, hi: HI };
    const pair = (f: (w: Window) => number) => ({
      value: f(now),
      delta_percent: expect.closeTo(delta(f(now), f(PREVIOUS)), 9),
    });
    expect(body.highlights).toEqual({
      total_user_count: pair((w) => usersIn(w).size),
      total_new_user_count: pair(newIn),
      total_conversation_count: pair(startedIn),
      total_intent_count: pair(intentsIn),
    });
    expect(usersIn(now).size).toBeLessThan(BINS.map((b) => usersIn(b).size).reduce((a, b) => a + b)); // distinct over the range, not a sum of bins
  });

  it('scoped to one session: only its person and events', async () => {
    const body = engagementSchema.parse(await summary('engagement', { session_id: 'c1' }));
    expect(body.points.map((p) => [p.user_count, p.conversation_count, p.intent_count])).toEqual(
      BINS.map((b) => {
        const convs = CONVS.filter((c) => c.session === 'c1');
        const active = TIMES.some((x) => x.user === 'carol' && inside(b, x.ts)) ? 1 : 0;
        return [
          active,
          convs.filter((c) => inside(b, c.started)).length,
          convs.filter((c) => inside(b, c.closed)).reduce((n, c) => n + c.intents.length, 0),
        ];
      }),
    );
  });
});

describe('GET /summary/new-intents', () => {
  it('lists found intent names that no user-defined intent (archived or not) has, sorted', async () => {
    const found = [...new Set(CONVS.filter((c) => c.closed !== undefined).flatMap((c) => c.intents))].sort();
    expect(newIntentsSchema.parse(await ok(t, '/bc/v1/summary/new-intents'))).toEqual(found);
    // Intent names are unique whatever their case: "Cancel" is the found "cancel" (found by probing).
    for (const [name, archived] of [
      ['Cancel', false],
      ['greeting', true],
    ] as const) {
      const res = await call(t, 'POST', '/bc/v1/udi', { intent: { name, description: '' }, archived });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }
    expect(newIntentsSchema.parse(await ok(t, '/bc/v1/summary/new-intents'))).toEqual(
      found.filter((n) => n !== 'cancel' && n !== 'greeting'),
    );
  });
});

describe('invalid parameters: 400 naming the parameter', () => {
  const paths = (json: unknown) => (json as { issues?: Array<{ path: string }> }).issues?.map((i) => i.path);
  it.each(['top-intents', 'user-sentiment', 'user-conversations', 'engagement'])('%s', async (route) => {
    const missing = await call(t, 'GET', `/bc/v1/summary/${route}`);
    expect(missing.status).toBe(400);
    expect(paths(missing.json)).toContain('range');
    const zone = await call(
      t,
      'GET',
      withQuery(`/bc/v1/summary/${route}`, { range: { ...range, tz: 'Mars/Olympus' } }),
    );
    expect(zone.status).toBe(400);
    expect(paths(zone.json)).toEqual(['range.tz']);
    const period = await call(
      t,
      'GET',
      withQuery(`/bc/v1/summary/${route}`, { range: { ...range, period: 'year' } }),
    );
    expect(period.status).toBe(400);
    expect(paths(period.json)).toEqual(['range.period']);
    const scope = await call(
      t,
      'GET',
      withQuery(`/bc/v1/summary/${route}`, { range, session_id: 'x'.repeat(101) }),
    );
    expect(scope.status).toBe(400);
    expect(paths(scope.json)).toEqual(['session_id']);
  });
});

describe('read routes: a bad bound is one issue', () => {
  const paths = (json: unknown) => (json as { issues?: Array<{ path: string }> }).issues?.map((i) => i.path);
  it('live-events and event-counts name the bad start alone, not also "end must not be before start"', async () => {
    const live = await call(t, 'GET', '/bc/v1/live-events/events?start=garbage&end=2100-01-01');
    expect(live.status).toBe(400);
    expect(paths(live.json)).toEqual(['start']);
    const ranges = encodeURIComponent(JSON.stringify([{ start: 'garbage', end: '2100-01-01' }]));
    const counts = await call(t, 'GET', `/bc/v1/summary/event-counts?ranges=${ranges}`);
    expect(counts.status).toBe(400);
    expect(paths(counts.json)).toEqual(['ranges[0].start']);
    const inverted = await call(t, 'GET', '/bc/v1/live-events/events?start=2100-01-01&end=2000-01-01');
    expect(paths(inverted.json)).toEqual(['end']);
  });

  // The bracket form refused them; the JSON form counted as if they were not there (found by probing).
  it('event-counts refuses a reserved key inside a range of the JSON form, naming it', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const range = `{"start":"2025-01-01T00:00:00Z","end":"2025-02-01T00:00:00Z","${key}":{"x":1}}`;
      const counts = await call(
        t,
        'GET',
        `/bc/v1/summary/event-counts?ranges=${encodeURIComponent(`[${range}]`)}`,
      );
      expect(counts.status).toBe(400);
      expect(paths(counts.json)).toEqual([`ranges[0].${key}`]);
    }
  });
});
