import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userRecordSchema } from '../src/shared/users.js';
import {
  conversationTurnsSchema,
  storedEventSchema,
  userDetailsSchema,
  userInsightsSchema,
  userListSchema,
} from '../src/shared/users-api.js';
import { call, ok, withQuery } from './helpers/api.js';
import { storedEvents } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * The /user/* read routes on users, sessions and conversations sent through /events/queue and
 * /user/identify, among them an anonymous device merged into an identified user and one left
 * anonymous. Expected values come from the events below (decisions §3 for ids, §4–5 for the rest).
 */

const POSITIVE = ['Thanks, this is great, I love it', 'Great, I love the fast refund'];
const NEGATIVE = 'This is terrible and awful, I hate it';
const NEUTRAL = 'Send the invoice to the office on Monday';
/** decisions §3: a device's anonymous user. */
const anon = (device: string) => `anon_${createHash('sha256').update(device).digest('hex').slice(0, 16)}`;

type Wire = Record<string, unknown> & { timestamp: string };
let n = 0;
const ev = (e: Record<string, unknown> & { timestamp: string }): Wire & { event_id: string } => ({
  ...e,
  event_id: `ev-${(n++).toString().padStart(3, '0')}`,
});
const turn = (
  session: string,
  ts: string,
  user: string,
  extra: Record<string, unknown> = {},
  conv?: string,
) =>
  ev({
    type: 'track',
    event: 'Conversation Turn',
    session_id: session,
    ...(conv === undefined ? {} : { conversation_id: conv }),
    timestamp: ts,
    properties: { user, assistant: `re: ${user}`, ...extra },
  });
const ended = (session: string, conv: string, ts: string) =>
  ev({
    type: 'track',
    event: 'Conversation Ended',
    session_id: session,
    conversation_id: conv,
    timestamp: ts,
  });

const TRAITS = {
  ben: { plan: 'free', country: 'us' },
  cy: { plan: 'team', country: 'fr', beta: true },
  ann: { plan: 'pro', country: 'de' },
} as const;

const SENT: Array<Wire & { event_id: string }> = [
  ev({ type: 'identify', user_id: 'ben', traits: TRAITS.ben, timestamp: '2025-01-03T09:00:00.000Z' }),
  ev({ type: 'identify', user_id: 'cy', traits: TRAITS.cy, timestamp: '2025-01-04T09:00:00.000Z' }),
  ev({ type: 'identify', user_id: 'ann', traits: TRAITS.ann, timestamp: '2025-01-05T09:00:00.000Z' }),
  // A device's anonymous session, then the device is identified as ann: merged into her.
  ev({
    type: 'start_session',
    session_id: 'dev-s',
    device_id: 'dev-1',
    attributes: { channel: 'web' },
    timestamp: '2025-01-06T08:00:00.000Z',
  }),
  turn('dev-s', '2025-01-06T08:00:10.000Z', NEUTRAL),
  ev({ type: 'end_session', session_id: 'dev-s', timestamp: '2025-01-06T08:02:00.000Z' }),
  ev({ type: 'identify', user_id: 'ann', device_id: 'dev-1', timestamp: '2025-01-06T09:00:00.000Z' }),
  ev({ type: 'start_session', session_id: 'ann-s1', user_id: 'ann', timestamp: '2025-01-06T10:00:00.000Z' }),
  turn('ann-s1', '2025-01-06T10:00:20.000Z', POSITIVE[0]!, { intent: 'refund' }, 'talk'),
  turn('ann-s1', '2025-01-06T10:01:00.000Z', POSITIVE[1]!, { intent: 'refund' }, 'talk'),
  ev({ type: 'end_session', session_id: 'ann-s1', timestamp: '2025-01-06T10:05:00.000Z' }),
  // Still open: the same conversation id in another session of hers.
  ev({ type: 'start_session', session_id: 'ann-s2', user_id: 'ann', timestamp: '2025-01-08T10:00:00.000Z' }),
  turn('ann-s2', '2025-01-08T10:00:30.000Z', NEUTRAL, {}, 'talk'),
  turn('ann-s2', '2025-01-08T10:01:30.000Z', 'and the receipt too', {}, 'talk'),
  ev({ type: 'start_session', session_id: 'ben-s1', user_id: 'ben', timestamp: '2025-01-07T10:00:00.000Z' }),
  turn('ben-s1', '2025-01-07T10:00:10.000Z', NEGATIVE, { intent: 'cancel' }, 'talk'),
  ended('ben-s1', 'talk', '2025-01-07T10:00:50.000Z'),
  ev({ type: 'end_session', session_id: 'ben-s1', timestamp: '2025-01-07T10:01:00.000Z' }),
  ev({ type: 'start_session', session_id: 'cy-s1', user_id: 'cy', timestamp: '2025-01-07T12:00:00.000Z' }),
  turn('cy-s1', '2025-01-07T12:00:10.000Z', POSITIVE[0]!, { intent: 'refund' }, 'c-a'),
  ev({
    type: 'track',
    event: 'Conversation Function',
    session_id: 'cy-s1',
    conversation_id: 'c-a',
    timestamp: '2025-01-07T12:00:20.000Z',
    properties: { name: 'lookup', error: 'timeout' },
  }),
  turn('cy-s1', '2025-01-07T12:00:30.000Z', POSITIVE[1]!, { intent: 'greeting' }, 'c-a'),
  ended('cy-s1', 'c-a', '2025-01-07T12:01:00.000Z'),
  turn('cy-s1', '2025-01-07T12:02:00.000Z', POSITIVE[0]!, { intent: 'greeting' }, 'c-b'),
  ended('cy-s1', 'c-b', '2025-01-07T12:02:30.000Z'),
  ev({ type: 'end_session', session_id: 'cy-s1', timestamp: '2025-01-07T12:03:00.000Z' }),
  // A device never identified: its anonymous user is listed as such.
  ev({
    type: 'start_session',
    session_id: 'dev2-s',
    device_id: 'dev-2',
    timestamp: '2025-01-09T00:00:00.000Z',
  }),
  turn('dev2-s', '2025-01-09T00:00:05.000Z', NEUTRAL),
  ev({ type: 'end_session', session_id: 'dev2-s', timestamp: '2025-01-09T00:00:10.000Z' }),
];

const sentOf = (session: string) => SENT.filter((e) => e.session_id === session);
const time = (session: string, type: string) => sentOf(session).find((e) => e.type === type)?.timestamp;

let t: TestService;
let dee: { user_id: string; created_at: string };
beforeAll(async () => {
  t = await startTestService();
  const res = await call(t, 'POST', '/bc/v1/events/queue', SENT);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  // A user made by /user/identify alone: created now, no sessions.
  const identified = await call(t, 'POST', '/bc/v1/user/identify', { id: 'dee', traits: { plan: 'pro' } });
  expect(identified.status, JSON.stringify(identified.json)).toBe(200);
  dee = userRecordSchema.parse(identified.json);
});
afterAll(() => t.stop());

const issuePaths = (json: unknown) =>
  (json as { issues?: Array<{ path: string }> }).issues?.map((i) => i.path);
const list = async (query: Record<string, unknown> = {}) =>
  userListSchema.parse(await ok(t, '/bc/v1/user/list', query));

/** Every person, in created_at order, as the events above make them. */
const EXPECTED = [
  { id: 'ben', aliases: ['ben'], created_at: '2025-01-03T09:00:00.000Z', traits: TRAITS.ben },
  { id: 'cy', aliases: ['cy'], created_at: '2025-01-04T09:00:00.000Z', traits: TRAITS.cy },
  { id: 'ann', aliases: ['ann', anon('dev-1')], created_at: '2025-01-05T09:00:00.000Z', traits: TRAITS.ann },
  { id: anon('dev-2'), aliases: [anon('dev-2')], created_at: '2025-01-09T00:00:00.000Z', traits: {} },
  { id: 'dee', aliases: ['dee'], traits: { plan: 'pro' } },
];

describe('GET /user/list', () => {
  it('lists every person (merged anonymous users only through their user), oldest first', async () => {
    const body = await list();
    expect(body.total).toBe(EXPECTED.length);
    expect(body.users).toEqual(
      EXPECTED.map((u) => ({ user_id: expect.stringMatching(/^u_/), created_at: dee.created_at, ...u })),
    );
    expect(body.users.find((u) => u.id === 'dee')?.user_id).toBe(dee.user_id);
    expect(new Set(body.users.map((u) => u.user_id)).size).toBe(EXPECTED.length);
  });

  it('sorts by id or user_id, either way', async () => {
    const ids = EXPECTED.map((u) => u.id);
    const byId = await list({ sort: { value: 'id', order: 'desc' } });
    expect(byId.users.map((u) => u.id)).toEqual([...ids].sort().reverse());
    const all = (await list()).users.map((u) => u.user_id);
    const byUserId = await list({ sort: { value: 'user_id', order: 'asc' } });
    expect(byUserId.users.map((u) => u.user_id)).toEqual([...all].sort());
    const newest = await list({ sort: { value: 'created_at', order: 'desc' } });
    expect(newest.users.map((u) => u.id)).toEqual([...ids].reverse());
  });

  it('pages with limit and offset; total counts every match', async () => {
    const ids = EXPECTED.map((u) => u.id);
    const page = await list({ limit: 2, offset: 1 });
    expect(page).toMatchObject({ total: ids.length });
    expect(page.users.map((u) => u.id)).toEqual(ids.slice(1, 3));
    const past = await list({ offset: 10 });
    expect(past).toEqual({ total: ids.length, users: [] });
    // limit 0 asks for the count alone.
    expect(await list({ limit: 0 })).toEqual({ total: ids.length, users: [] });
    expect(await list({ limit: 0, regex: '^pro$' })).toEqual({ total: 2, users: [] });
  });

  it('regex (RE2) matches the id, any alias or any trait value', async () => {
    const ids = async (regex: string) => (await list({ regex })).users.map((u) => u.id);
    expect(await ids('^pro$')).toEqual(['ann', 'dee']); // trait value
    expect(await ids('^anon_')).toEqual(['ann', anon('dev-2')]); // ann through her merged device's id
    expect(await ids('(?i)^FR$')).toEqual(['cy']);
    expect(await ids('^true$')).toEqual(['cy']); // a boolean trait as text
    expect(await ids('^b')).toEqual(['ben']);
    const matched = await list({ regex: '^(pro|free)$', limit: 1, offset: 1 });
    expect(matched.total).toBe(3);
    expect(matched.users.map((u) => u.id)).toEqual(['ann']);
  });

  it.each([
    [{ regex: '(' }, 'regex'],
    [{ limit: -1 }, 'limit'],
    [{ offset: 'x' }, 'offset'],
    [{ sort: { value: 'name', order: 'asc' } }, 'sort.value'],
    [{ sort: { value: 'id', order: 'up' } }, 'sort.order'],
  ])('400 naming the bad parameter: %j', async (query, path) => {
    const res = await call(t, 'GET', withQuery('/bc/v1/user/list', query));
    expect(res.status).toBe(400);
    expect(issuePaths(res.json)).toEqual([path]);
  });

  it.each([
    ['sort[value]=id&sort[order]=asc&sort[constructor]=1', 'sort.constructor'],
    ['sort[__proto__][x]=1', 'sort.__proto__.x'],
  ])('400 for a reserved key in bracket form, as in JSON: %s', async (query, path) => {
    // The key was dropped and the rest of the object taken: 200 (found by probing).
    const res = await call(t, 'GET', `/bc/v1/user/list?${query}`);
    expect(res.status).toBe(400);
    expect(issuePaths(res.json)).toEqual([path]);
  });

  it.each([
    ['/bc/v1/user/list?__proto__=1', '__proto__'],
    ['/bc/v1/user/list?constructor=x', 'constructor'],
    // A route that reads no such parameter, and a chart's bracket form beside its own.
    ['/bc/v1/agg/trait-names?__proto__[x]=1', '__proto__.x'],
  ])('400 for a reserved parameter name, on every route: %s', async (url, path) => {
    // Ignored: 200 (found by probing).
    const res = await call(t, 'GET', url);
    expect(res.status).toBe(400);
    expect(issuePaths(res.json)).toEqual([path]);
  });
});

describe('GET /user/details', () => {
  it("a user's record and every session (merged device's included), oldest first, with all their events", async () => {
    const byCallerId = userDetailsSchema.parse(await ok(t, '/bc/v1/user/details', { user_id: 'ann' }));
    const ann = EXPECTED[2]!;
    expect(byCallerId).toMatchObject({
      id: 'ann',
      aliases: ann.aliases,
      created_at: ann.created_at,
      traits: ann.traits,
    });
    expect(byCallerId.sessions.map((s) => s.session_id)).toEqual(['dev-s', 'ann-s1', 'ann-s2']);
    for (const s of byCallerId.sessions) {
      const started = time(s.session_id, 'start_session')!;
      const sent = sentOf(s.session_id);
      const end = time(s.session_id, 'end_session') ?? sent[sent.length - 1]!.timestamp; // open: last event
      expect(s).toMatchObject({
        user_id: 'ann',
        started_at: started,
        ended_at: end,
        duration: Date.parse(end) - Date.parse(started),
        user_traits: ann.traits,
        attributes: s.session_id === 'dev-s' ? { channel: 'web' } : {},
      });
      // Every stored row of the session (generated ones too), as the live-events route lists them.
      const stored = await storedEvents(t, s.session_id);
      expect(s.events.map((e) => e.event_id).sort()).toEqual(stored.map((e) => e.event_id).sort());
      for (const e of sent) expect(s.events.map((x) => x.event_id)).toContain(e.event_id);
      expect(new Set(s.events.map((e) => e.user_id))).toEqual(new Set(['ann']));
      const times = s.events.map((e) => Date.parse(e.timestamp));
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
    // The same person by the service id and by the merged device's anonymous id.
    expect(await ok(t, '/bc/v1/user/details', { user_id: byCallerId.user_id })).toEqual(byCallerId);
    expect(await ok(t, '/bc/v1/user/details', { user_id: anon('dev-1') })).toEqual(byCallerId);
  });

  it('pages sessions with limit and offset', async () => {
    const page = userDetailsSchema.parse(
      await ok(t, '/bc/v1/user/details', { user_id: 'ann', limit: 1, offset: 1 }),
    );
    expect(page.sessions.map((s) => s.session_id)).toEqual(['ann-s1']);
    const none = userDetailsSchema.parse(await ok(t, '/bc/v1/user/details', { user_id: 'dee' }));
    expect(none).toMatchObject({ id: 'dee', user_id: dee.user_id, sessions: [] });
  });

  it('404 for an unknown user, 400 naming a missing or bad parameter', async () => {
    expect((await call(t, 'GET', '/bc/v1/user/details?user_id=nobody')).status).toBe(404);
    const missing = await call(t, 'GET', '/bc/v1/user/details');
    expect(missing.status).toBe(400);
    expect(issuePaths(missing.json)).toEqual(['user_id']);
    const limit = await call(t, 'GET', '/bc/v1/user/details?user_id=ann&limit=1.5');
    expect(limit.status).toBe(400);
    expect(issuePaths(limit.json)).toEqual(['limit']);
    // Numbers are digits: a space read as 0 (no rows, 200) and 0x10 as 16 (found by fuzzing).
    for (const route of [
      '/bc/v1/user/list?limit=%20',
      '/bc/v1/user/list?limit=0x10',
      '/bc/v1/user/list?offset=1e1',
      '/bc/v1/live-events/events?start=2025-01-01&end=2026-01-01&limit=%09',
      '/bc/v1/db/events/find?limit=0b11',
    ]) {
      const refused = await call(t, 'GET', route);
      expect(refused.status, `${route}: ${JSON.stringify(refused.json)}`).toBe(400);
      expect(JSON.stringify(refused.json)).toContain('must be a number');
    }
  });
});

describe('GET /user/insights', () => {
  const insights = async (userId: string, query: Record<string, unknown> = {}) =>
    userInsightsSchema.parse(await ok(t, '/bc/v1/user/insights', { user_id: userId, ...query }));
  const ms = (a: string, b: string) => Date.parse(b) - Date.parse(a);

  it('each conversation with its sentiment, one-line summary and intents counted as successful', async () => {
    const body = await insights('ann');
    expect(body).toMatchObject({ id: 'ann', aliases: EXPECTED[2]!.aliases });
    const dur = (first: string, close: string) => ms(first, close);
    expect(body.conversations).toEqual([
      {
        user_id: 'ann',
        session_id: 'dev-s',
        conversation_id: 'dev-s/1', // decisions §4: the session's first default conversation
        started_at: '2025-01-06T08:00:10.000Z',
        duration: dur('2025-01-06T08:00:10.000Z', '2025-01-06T08:02:00.000Z'),
        sentiment: 'neutral',
        summary: `1 turns in ${dur('2025-01-06T08:00:10.000Z', '2025-01-06T08:02:00.000Z') / 1000} s; intents: none; sentiment: neutral`,
        successful_intents: 0,
        unsuccessful_intents: 0,
      },
      {
        user_id: 'ann',
        session_id: 'ann-s1',
        conversation_id: 'talk',
        started_at: '2025-01-06T10:00:20.000Z',
        duration: dur('2025-01-06T10:00:20.000Z', '2025-01-06T10:05:00.000Z'),
        sentiment: 'positive',
        summary: `2 turns in ${dur('2025-01-06T10:00:20.000Z', '2025-01-06T10:05:00.000Z') / 1000} s; intents: refund; sentiment: positive`,
        successful_intents: 1,
        unsuccessful_intents: 0,
      },
      {
        user_id: 'ann',
        session_id: 'ann-s2',
        conversation_id: 'talk',
        started_at: '2025-01-08T10:00:30.000Z',
        sentiment: 'neutral',
        summary: expect.stringMatching(/^open/),
        successful_intents: 0,
        unsuccessful_intents: 0,
      },
    ]);
  });

  it('intents are unsuccessful after negative sentiment or a failed function call', async () => {
    const ben = await insights('ben');
    expect(
      ben.conversations.map((c) => [
        c.conversation_id,
        c.sentiment,
        c.successful_intents,
        c.unsuccessful_intents,
      ]),
    ).toEqual([['talk', 'negative', 0, 1]]);
    const cy = await insights('cy');
    expect(
      cy.conversations.map((c) => [
        c.conversation_id,
        c.sentiment,
        c.successful_intents,
        c.unsuccessful_intents,
      ]),
    ).toEqual([
      ['c-a', 'positive', 0, 2], // refund and greeting, with the lookup that failed
      ['c-b', 'positive', 1, 0],
    ]);
    expect(cy.conversations[0]?.summary).toContain('intents: refund, greeting');
  });

  it('pages conversations; 404 for an unknown user', async () => {
    const page = await insights('ann', { limit: 1, offset: 2 });
    expect(page.conversations.map((c) => c.session_id)).toEqual(['ann-s2']);
    expect((await insights('dee')).conversations).toEqual([]);
    expect((await call(t, 'GET', '/bc/v1/user/insights?user_id=nobody')).status).toBe(404);
    const bad = await call(t, 'GET', '/bc/v1/user/insights?user_id=ann&offset=-2');
    expect(bad.status).toBe(400);
    expect(issuePaths(bad.json)).toEqual(['offset']);
  });
});

describe('GET /user/conversation', () => {
  const turns = async (query: Record<string, unknown>) =>
    conversationTurnsSchema.parse(await ok(t, '/bc/v1/user/conversation', query));
  const expected = (sessions: string[], conv: string) =>
    SENT.filter(
      (e) =>
        e.event === 'Conversation Turn' &&
        e.conversation_id === conv &&
        sessions.includes(String(e.session_id)),
    )
      .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
      .map((e) => {
        const p = e.properties as { user: string; assistant: string };
        return { user: p.user, assistant: p.assistant };
      });

  it("the user's turns of that conversation id in every session of theirs, in time order", async () => {
    const all = await turns({ user_id: 'ann', conversation_id: 'talk' });
    expect(all).toEqual(expected(['ann-s1', 'ann-s2'], 'talk'));
    expect(all).toHaveLength(4); // ben's "talk" is not hers
    expect(await turns({ user_id: 'ben', conversation_id: 'talk' })).toEqual(expected(['ben-s1'], 'talk'));
    // The device's turn named no conversation: it went to the session's default one (decisions §4).
    const deviceTurns = SENT.filter((e) => e.session_id === 'dev-s' && e.event === 'Conversation Turn');
    expect(await turns({ user_id: anon('dev-1'), conversation_id: 'dev-s/1' })).toEqual(
      deviceTurns.map(() => ({ user: NEUTRAL, assistant: `re: ${NEUTRAL}` })),
    );
    expect(deviceTurns).toHaveLength(1);
  });

  it('pages turns; [] for a conversation the user does not have; 404 for an unknown user', async () => {
    const all = expected(['ann-s1', 'ann-s2'], 'talk');
    expect(await turns({ user_id: 'ann', conversation_id: 'talk', limit: 2, offset: 1 })).toEqual(
      all.slice(1, 3),
    );
    expect(await turns({ user_id: 'ann', conversation_id: 'c-a' })).toEqual([]);
    expect(
      (await call(t, 'GET', '/bc/v1/user/conversation?user_id=nobody&conversation_id=talk')).status,
    ).toBe(404);
    const missing = await call(t, 'GET', '/bc/v1/user/conversation?user_id=ann');
    expect(missing.status).toBe(400);
    expect(issuePaths(missing.json)).toEqual(['conversation_id']);
  });
});

describe('GET /user/event', () => {
  it('one stored event by id, its user the current person (after the merge)', async () => {
    for (const sent of [
      SENT.find((e) => e.session_id === 'ann-s1' && e.event === 'Conversation Turn')!,
      SENT.find((e) => e.session_id === 'dev-s' && e.event === 'Conversation Turn')!,
    ]) {
      const body = storedEventSchema.parse(await ok(t, '/bc/v1/user/event', { event_id: sent.event_id }));
      expect(body).toMatchObject({
        organization_id: expect.any(String),
        app_id: t.projectId,
        user_id: 'ann',
        event_id: sent.event_id,
        session_id: sent.session_id,
        timestamp: sent.timestamp,
        event: 'Conversation Turn',
        properties: sent.properties as Record<string, unknown>,
        user_traits: TRAITS.ann,
      });
    }
  });

  it('generated events (a Conversation Summary) by their ids, as live events lists them', async () => {
    const stored = await storedEvents(t, 'cy-s1');
    const generated = stored.filter(
      (e) => e.event === 'Conversation Summary' || e.event === 'Intent Informed',
    );
    expect(generated.map((e) => e.event).sort()).toEqual([
      'Conversation Summary',
      'Conversation Summary',
      'Intent Informed',
      'Intent Informed',
      'Intent Informed',
    ]);
    for (const e of generated) expect(await ok(t, '/bc/v1/user/event', { event_id: e.event_id })).toEqual(e);
  });

  it('404 for an unknown id, 400 for a missing or too long one', async () => {
    expect((await call(t, 'GET', '/bc/v1/user/event?event_id=ev-999')).status).toBe(404);
    const missing = await call(t, 'GET', '/bc/v1/user/event');
    expect(missing.status).toBe(400);
    expect(issuePaths(missing.json)).toEqual(['event_id']);
    const long = await call(t, 'GET', withQuery('/bc/v1/user/event', { event_id: 'e'.repeat(129) }));
    expect(long.status).toBe(400);
    expect(issuePaths(long.json)).toEqual(['event_id']);
  });
});

// Found by probing: aliases were listed in the order the service received them.
describe('aliases in order of first use (decisions §3)', () => {
  it('lists the ids by the earliest record naming each, whatever order the records arrive in', async () => {
    const records = (who: string) => ({
      identify: { type: 'identify', user_id: `${who}-a`, timestamp: '2025-03-01T00:00:00Z' },
      late: {
        type: 'alias',
        user_id: `${who}-b`,
        previous_id: `${who}-a`,
        timestamp: '2025-03-04T00:00:00Z',
      },
      early: {
        type: 'alias',
        user_id: `${who}-c`,
        previous_id: `${who}-a`,
        timestamp: '2025-03-02T00:00:00Z',
      },
    });
    for (const [who, order] of [
      ['first-use-1', ['identify', 'late', 'early']],
      ['first-use-2', ['identify', 'early', 'late']],
    ] as const) {
      const r = records(who);
      for (const k of order) expect((await call(t, 'POST', '/bc/v1/events/event', r[k])).status).toBe(200);
      const user = userDetailsSchema.parse(await ok(t, '/bc/v1/user/details', { user_id: `${who}-a` }));
      expect(user.aliases, order.join()).toEqual([`${who}-a`, `${who}-c`, `${who}-b`]);
      // The primary id is the latest alias's, b, in both orders.
      expect(user.id).toBe(`${who}-b`);
    }
  });
});

// Found by probing with the hosted service's reference in hand.
describe('/user/* as the hosted service answers them', () => {
  let u: TestService;
  beforeAll(async () => {
    u = await startTestService();
  });
  afterAll(() => u.stop());
  const post = async (events: unknown[]) => {
    const res = await call(u, 'POST', '/bc/v1/events/queue', events);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };
  const at = '2025-04-01T10:00:00.000Z';
  const said = (user: string, extra: Record<string, unknown> = {}) => ({
    type: 'track',
    event: 'Conversation Turn',
    session_id: 's10',
    conversation_id: 'q1',
    user_id: 'gina',
    timestamp: at,
    properties: { user, assistant: `re: ${user}` },
    ...extra,
  });

  it('turns of one instant come in the order they were sent, not by event id', async () => {
    await post([
      said('first', { event_id: 'zz-1' }),
      said('second', { event_id: 'aa-2' }),
      said('third'),
      said('fourth'),
      said('fifth'),
    ]);
    const turns = conversationTurnsSchema.parse(
      await ok(u, '/bc/v1/user/conversation', { user_id: 'gina', conversation_id: 'q1' }),
    );
    expect(turns.map((x) => x.user)).toEqual(['first', 'second', 'third', 'fourth', 'fifth']);
    const details = userDetailsSchema.parse(await ok(u, '/bc/v1/user/details', { user_id: 'gina' }));
    const names = details.sessions[0]?.events.map((e) => e.event);
    expect(names?.slice(0, 3)).toEqual(['Session Started', 'Conversation Started', 'Conversation Turn']);
  });

  it('a conversation id of several sessions is one conversation with session_id', async () => {
    // The Python client sends "None" for every conversation its caller leaves unnamed.
    const none = (session: string, user: string, minute: number) => ({
      type: 'track',
      event: 'Conversation Turn',
      session_id: session,
      conversation_id: 'None',
      user_id: 'hal',
      timestamp: `2025-04-02T10:0${minute}:00.000Z`,
      properties: { user, assistant: 'ok' },
    });
    await post([none('h1', 'in h1', 0), none('h2', 'in h2', 1)]);
    const of = async (query: Record<string, unknown>) =>
      conversationTurnsSchema
        .parse(await ok(u, '/bc/v1/user/conversation', { user_id: 'hal', conversation_id: 'None', ...query }))
        .map((x) => x.user);
    expect(await of({})).toEqual(['in h1', 'in h2']);
    expect(await of({ session_id: 'h2' })).toEqual(['in h2']);
    expect(await of({ session_id: 'h3' })).toEqual([]);
  });

  it('lists up to 100,000 users when no limit is given, as the reference says', async () => {
    const many = Array.from({ length: 1005 }, (_, i) => ({
      type: 'identify',
      user_id: `many-${String(i).padStart(4, '0')}`,
      timestamp: '2025-04-03T00:00:00.000Z',
    }));
    await post(many);
    const all = userListSchema.parse(await ok(u, '/bc/v1/user/list'));
    expect(all.total).toBeGreaterThanOrEqual(1005);
    expect(all.users).toHaveLength(all.total);
  });
});
