import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/service/store/migrations.js';
import { derivedSessionId } from '../src/shared/derived-session.js';
import type { StoredEvent } from '../src/shared/events.js';
import { at, byName, pythonClient, queue, storedEvents } from './helpers/ingest.js';
import { startServiceOn, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 17 item 2: conversation ids are scoped to their session (decisions §4 amended). The hosted
 * Python client sends `conversation_id: "None"` whenever its caller gives no id, so every session
 * of such an app names its conversation "None".
 *
 * The one service of this file runs over a data directory a release before the change wrote
 * (migrations 1–4 applied, one session "old-s" with an open conversation "None" and a turn), so the
 * upgrade path is exercised too: that stored conversation must be found under its session.
 */

const dir = tempDir();
let t: TestService;
const PROJECT = 'test-project';
const OLD_DAY = '2025-03-08T12:00:00Z';

async function databaseOfAnEarlierRelease(path: string): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  const c = await instance.connect();
  try {
    await c.run(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ)',
    );
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
      await c.run(m.sql);
      await c.run('INSERT INTO schema_migrations VALUES ($1, $2, now())', [m.version, m.name]);
    }
    const t0 = at(0, OLD_DAY);
    const t5 = at(5, OLD_DAY);
    await c.run(
      `INSERT INTO users VALUES ('${PROJECT}', 'u_old', 'u_old', 'old-user', false, '{}', '${t0}')`,
    );
    await c.run(`INSERT INTO user_ids VALUES ('${PROJECT}', 'old-user', 'u_old', nextval('user_id_seq'))`);
    await c.run(
      `INSERT INTO sessions VALUES ('${PROJECT}', 'old-s', 'u_old', NULL, '${t0}', NULL, '${t5}', NULL, NULL, NULL)`,
    );
    await c.run(`INSERT INTO conversations VALUES ('${PROJECT}', 'None', 'old-s', '${t0}', NULL, NULL)`);
    const row = (
      id: string,
      event: string,
      type: string,
      ts: string,
      conv: string | null,
      props: string | null,
    ) =>
      c.run(
        `INSERT INTO events VALUES ('${PROJECT}', $1, $2, $3, $4::TIMESTAMPTZ, 'u_old', 'old-s', $5, $6::JSON, $7, $4::TIMESTAMPTZ)`,
        [id, event, type, ts, conv, props, event === 'Conversation Started' ? 'old-1' : null],
      );
    await row('old-0', 'Session Started', 'start_session', t0, null, null);
    await row(
      'old-1',
      'Conversation Turn',
      'track',
      t0,
      'None',
      '{"user":"hi","assistant":"hello","cost":0.5}',
    );
    await row('old-1#conversation-started:None', 'Conversation Started', 'track', t0, 'None', null);
    await row('old-2', 'Conversation Turn', 'track', t5, 'None', '{"user":"more","assistant":"sure"}');
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

beforeAll(async () => {
  await databaseOfAnEarlierRelease(join(dir.path, 'cas.duckdb'));
  t = await startServiceOn(dir.path);
});
afterAll(async () => {
  await t?.stop();
  dir.cleanup();
});

/** A turn as the Python client sends it without a conversation id, `s` seconds into the day. */
const turn = (session: string, s: number, extra: Record<string, unknown> = {}, day?: string) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: session,
  conversation_id: 'None',
  timestamp: at(s, day),
  properties: { user: `question ${s}`, assistant: `answer ${s}` },
  ...extra,
});

const summaryOf = (events: readonly StoredEvent[]) => {
  const summaries = byName(events, 'Conversation Summary');
  expect(summaries).toHaveLength(1);
  return summaries[0]!;
};

const range = { start: '2025-03-09', end: '2025-03-10', period: 'day', tz: 'UTC' };

async function chart(kind: string, controls: unknown, scope = '') {
  const res = await t.get(
    `/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}${scope}`,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json;
}

type SessionChart = { points: Array<{ sessions: number; conversations: number; drilldown_id: string }> };
type Segmentation = Array<{ points: Array<{ total: number; drilldown_id: string }> }>;

describe('conversation ids are scoped to their session', () => {
  it('stores every turn of two Python-client sessions that both send conversation_id "None"', async () => {
    const send = pythonClient(t);
    for (const [session, user, turns] of [
      ['py-1', 'alice', 3],
      ['py-2', 'bob', 2],
    ] as const) {
      await send({ type: 'start_session', session_id: session, id: user, timestamp: at(0) });
      for (let i = 1; i <= turns; i++) expect(await send(turn(session, i))).toMatchObject({ accepted: 1 });
      await send({ type: 'end_session', session_id: session, timestamp: at(60) });
    }
    for (const [session, turns] of [
      ['py-1', 3],
      ['py-2', 2],
    ] as const) {
      const events = await storedEvents(t, session);
      expect(byName(events, 'Conversation Turn').map((e) => e.conversation_id)).toEqual(
        Array(turns).fill('None'),
      );
      expect(byName(events, 'Conversation Started')).toHaveLength(1);
      expect(summaryOf(events)).toMatchObject({ conversation_id: 'None', properties: { turns } });
    }
  });

  it('continues a conversation "None" stored before the upgrade in its own session only', async () => {
    const res = await queue(t, [
      turn('old-s', 10, { properties: { user: 'again', assistant: 'ok', cost: 0.25 } }, OLD_DAY),
      { type: 'end_session', session_id: 'old-s', timestamp: at(20, OLD_DAY) },
    ]);
    expect(res.json).toEqual({ status: 'ok', accepted: 2, duplicates: 0 });
    const events = await storedEvents(t, 'old-s');
    // The stored start is the conversation's one start: it was found, not opened again.
    expect(byName(events, 'Conversation Started').map((e) => e.event_id)).toEqual([
      'old-1#conversation-started:None',
    ]);
    expect(summaryOf(events).properties).toMatchObject({ turns: 3, cost: 0.75, duration_s: 20 });
    // The sessions of the first test kept theirs.
    expect(summaryOf(await storedEvents(t, 'py-1')).properties).toMatchObject({ turns: 3 });
  });

  it('keeps summaries, intents, totals and closedness apart for one id in two sessions', async () => {
    const open = (session: string, user: string) => ({
      type: 'start_session',
      session_id: session,
      user_id: user,
      timestamp: at(100),
    });
    const named = (session: string, s: number, props: Record<string, unknown>) =>
      turn(session, s, { conversation_id: 'c', properties: { user: 'q', assistant: 'a', ...props } });
    const first = await queue(t, [
      open('scope-a', 'carol'),
      open('scope-b', 'dave'),
      named('scope-a', 101, { intent: 'refund', cost: 0.1 }),
      named('scope-b', 102, { intent: 'billing', cost: 0.25 }),
      {
        type: 'track',
        event: 'Conversation Ended',
        session_id: 'scope-a',
        conversation_id: 'c',
        timestamp: at(103),
      },
    ]);
    expect(first.json).toEqual({ status: 'ok', accepted: 5, duplicates: 0 });
    // A's "c" is closed; B's "c" is another conversation and still open.
    const closed = await queue(t, [named('scope-a', 104, {})]);
    expect(closed).toMatchObject({
      status: 409,
      json: { code: 'conversation_closed', issues: [{ path: '[0].conversation_id' }] },
    });
    const more = await queue(t, [
      named('scope-b', 105, { cost: 0.25 }),
      { type: 'end_session', session_id: 'scope-b', timestamp: at(110) },
      { type: 'end_session', session_id: 'scope-a', timestamp: at(110) },
    ]);
    expect(more.json).toEqual({ status: 'ok', accepted: 3, duplicates: 0 });

    const a = await storedEvents(t, 'scope-a');
    const b = await storedEvents(t, 'scope-b');
    expect(summaryOf(a).properties).toMatchObject({
      turns: 1,
      cost: 0.1,
      intents: ['refund'],
      duration_s: 2,
    });
    expect(summaryOf(b).properties).toMatchObject({
      turns: 2,
      cost: 0.5,
      intents: ['billing'],
      duration_s: 8,
    });
    expect(byName(a, 'Intent Informed').map((e) => e.properties?.intent)).toEqual(['refund']);
    expect(byName(b, 'Intent Informed').map((e) => e.properties?.intent)).toEqual(['billing']);
    // Generated ids stay unique although both conversations are "c" (each derives from its own origin).
    const ids = [...a, ...b].map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('finds a closed conversation of the stored derived session an imported event joins', async () => {
    const key = 'user:erin';
    const gap = { session_key: key, session_gap_ms: 1_800_000, user_id: 'erin' };
    const stored = derivedSessionId(key, Date.parse(at(3600, OLD_DAY)));
    const first = await queue(t, [
      turn(stored, 3600, { conversation_id: 'c', ...gap }, OLD_DAY),
      {
        type: 'track',
        event: 'Conversation Ended',
        session_id: stored,
        conversation_id: 'c',
        timestamp: at(3610, OLD_DAY),
        ...gap,
      },
    ]);
    expect(first.json).toEqual({ status: 'ok', accepted: 2, duplicates: 0 });
    // Named by the importer from its own start, the event joins `stored` (within the gap), whose "c"
    // is closed: it must be loaded under `stored` to be judged, not looked up under the event's name.
    const later = turn(
      derivedSessionId(key, Date.parse(at(3700, OLD_DAY))),
      3700,
      { conversation_id: 'c', ...gap },
      OLD_DAY,
    );
    expect(await queue(t, [later])).toMatchObject({
      status: 409,
      json: { code: 'conversation_closed', issues: [{ path: '[0].conversation_id' }] },
    });
  });

  it('counts one id in two sessions as two conversations in charts, read routes and drilldowns', async () => {
    const all = (await chart('session', { range })) as SessionChart;
    expect(all.points[0]).toMatchObject({ sessions: 4, conversations: 4 });
    const c = (await chart('session', { range }, '&conversation_id=c')) as SessionChart;
    expect(c.points[0]).toMatchObject({ sessions: 2, conversations: 2 });
    const oneA = (await chart('session', { range }, '&conversation_id=c&session_id=scope-a')) as SessionChart;
    expect(oneA.points[0]).toMatchObject({ sessions: 1, conversations: 1 });

    const drilled = await t.get(`/bc/v1/db/retrieve_data?id=${c.points[0]!.drilldown_id}`);
    expect(drilled).toMatchObject({
      status: 200,
      json: {
        kind: 'sessions',
        total: 2,
        rows: [
          { session_id: 'scope-a', id: 'carol', conversations: 1 },
          { session_id: 'scope-b', id: 'dave', conversations: 1 },
        ],
      },
    });

    const summaries = { range, eventFilters: [{ event_name: 'Conversation Summary' }] };
    const none = (await chart('segmentation', summaries, '&conversation_id=None')) as Segmentation;
    expect(none[0]!.points[0]!.total).toBe(2);
    const inB = (await chart(
      'segmentation',
      summaries,
      '&conversation_id=c&session_id=scope-b',
    )) as Segmentation;
    expect(inB[0]!.points[0]!.total).toBe(1);
    const users = await t.get(`/bc/v1/db/retrieve_data?id=${inB[0]!.points[0]!.drilldown_id}`);
    expect(users).toMatchObject({ status: 200, json: { kind: 'users', total: 1 } });
    const rows = (users.json as { rows: Array<{ id: string }> }).rows;
    expect(rows.map((r) => r.id)).toEqual(['dave']);

    // Read routes: conversation_id matches the id in every session; with session_id, one conversation.
    const counts = async (scope: string) => {
      const ranges = encodeURIComponent(JSON.stringify([{ start: '2025-03-09', end: '2025-03-10' }]));
      const res = await t.get(
        `/bc/v1/summary/event-counts?ranges=${ranges}&event_name=Conversation%20Turn${scope}`,
      );
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json;
    };
    expect(await counts('&conversation_id=c')).toEqual([3]);
    expect(await counts('&conversation_id=c&session_id=scope-b')).toEqual([2]);
    expect(await counts('&conversation_id=None')).toEqual([5]);
  });
});
