import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userRecordSchema } from '../src/shared/users.js';
import { openSocket, realtimeKey, type SdkSocket } from './helpers/live-socket.js';
import { startTestService, type TestService } from './helpers/service.js';
import { BODY_ROUTES } from './hostile/bodies.js';
import { snapshot } from './hostile/harness.js';

/**
 * Issue 7, item 3 (decisions §1): a key belongs to one organization, an organization owns projects,
 * and no route reveals or changes another project's data. Org A has two projects (a key each);
 * org B has one. Ids deliberately collide across tenants ("shared-s", "alice").
 */

let t: TestService;
const A1 = { key: 'key-a1', project: 'proj-a1' };
const A2 = { key: 'key-a2', project: 'proj-a2' };
const B = { key: 'key-b', project: 'proj-b' };
type Who = typeof A1;
// Each tenant's marker: lowercase with hyphens, so no generated id (ULIDs are upper-case base32, org
// ids hex) can contain one by chance. ("A1" did: a ULID's time prefix read 01M810A1 for a while.)
const SECRET = { A1: 'only-in-a1', A2: 'only-in-a2', B: 'only-in-b' } as const;
const as = (w: Who) => ({ authorization: `Bearer ${w.key}`, 'x-app-id': w.project });
const RANGE = { start: '2025-03-08', end: '2025-03-11', period: 'day', tz: 'UTC' };
const ts = (m: number) => new Date(Date.parse('2025-03-09T10:00:00Z') + m * 60_000).toISOString();
let beforeA: unknown;

async function write(w: Who, secret: string, sessions: string[]) {
  const user = await t.post('/bc/v1/user/identify', { id: 'alice', traits: { secret } }, as(w));
  expect(user.status).toBe(200);
  const events = sessions.flatMap((s, i) => [
    { type: 'start_session', session_id: s, user_id: 'alice', timestamp: ts(i * 10) },
    {
      type: 'track',
      event: `${secret} Event`,
      session_id: s,
      timestamp: ts(i * 10 + 1),
      properties: { secret },
    },
  ]);
  const res = await t.post('/bc/v1/events/queue', events, as(w));
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

beforeAll(async () => {
  t = await startTestService(
    { apiKey: A1.key, projectId: A1.project },
    // Every route is tried with the wrong keys from one address: no failed-auth limit here.
    { limits: { chartRatePerSecond: 0, authFailureRatePerSecond: 0 } },
  );
  const orgA = (await t.service.tenants.provision({ apiKey: A1.key, projectId: A1.project })).orgId;
  await t.service.tenants.provision({ apiKey: A2.key, projectId: A2.project, orgId: orgA });
  await t.service.tenants.provision({ apiKey: B.key, projectId: B.project });
  await write(A1, SECRET.A1, ['shared-s', 'a-only-s']);
  await write(A2, SECRET.A2, ['a2-s']);
  await write(B, SECRET.B, ['shared-s']);
  beforeA = await snapshot(t, A1.project, A1.key);
});
afterAll(() => t.stop());

const chart = (kind: string, controls: Record<string, unknown>) =>
  `/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify({ range: RANGE, ...controls }))}`;
const ALL_RANGES = encodeURIComponent(JSON.stringify([{ start: '2000-01-01', end: '2100-01-01' }]));
const GETS = [
  '/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01',
  `/bc/v1/summary/event-counts?ranges=${ALL_RANGES}`,
  '/bc/v1/agg/event-names',
  chart('segmentation', { eventFilters: [{ event_name: `${SECRET.A1} Event` }] }),
  chart('retention', { startingEvent: { event_name: `${SECRET.A1} Event` } }),
  chart('session', {}),
  chart('user-composition', { selectedTrait: { trait_name: 'secret' } }),
  '/bc/v1/db/retrieve_data?id=x',
  '/bc/v1/openapi.json',
  '/bc/v1/live-events/realtime',
];

describe('a key never reaches another organization’s project', () => {
  const pairs: Array<[string, Record<string, string>]> = [
    ['key A with project B', { authorization: `Bearer ${A1.key}`, 'x-app-id': B.project }],
    ['key B with project A1', { authorization: `Bearer ${B.key}`, 'x-app-id': A1.project }],
    ['key B (bare) with project A2', { authorization: B.key, 'x-app-id': A2.project }],
  ];
  it.each(pairs)('%s: 403 on every route, and A is unchanged', async (_name, headers) => {
    for (const r of BODY_ROUTES) {
      const res = await t.post(r.path, r.valid, headers);
      expect(res, r.path).toMatchObject({ status: 403, json: { status: 403, code: 'forbidden' } });
    }
    for (const path of GETS) expect((await t.get(path, headers)).status, path).toBe(403);
    expect(await snapshot(t, A1.project, A1.key)).toEqual(beforeA);
  });
});

const totals = (json: unknown) =>
  (json as Array<{ points: Array<{ total: number }> }>).flatMap((s) => s.points.map((p) => p.total));

describe.each([
  ['org B', B],
  ['project A2 of the same org', A2],
])('data written through A1 is invisible through %s', (_name, other) => {
  const get = (path: string) => t.get(path, as(other));

  it('live events, event counts and event names hold only its own rows', async () => {
    const live = await get(GETS[0]!);
    expect(JSON.stringify(live.json)).not.toContain(SECRET.A1);
    expect((live.json as unknown[]).length).toBe(2);
    expect((await get(GETS[1]!)).json).toEqual([(live.json as unknown[]).length]);
    expect((await get(GETS[2]!)).json).toEqual([
      'Session Started',
      `${other === B ? SECRET.B : SECRET.A2} Event`,
    ]);
    expect(
      (await get('/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&session_id=a-only-s')).json,
    ).toEqual([]);
  });

  it('every chart counts only its own data', async () => {
    const seg = await get(GETS[3]!);
    expect(totals(seg.json)).toEqual([0, 0, 0]);
    expect((await get(GETS[4]!)).json).toMatchObject([{ total_users: 0 }]);
    const sessions = (await get(GETS[5]!)).json as {
      points: Array<{ sessions: number; session_ids: string[] }>;
    };
    expect(sessions.points.flatMap((p) => p.session_ids)).toEqual([other === B ? 'shared-s' : 'a2-s']);
    const composition = JSON.stringify((await get(GETS[6]!)).json);
    expect(composition).not.toContain(SECRET.A1);
  });

  it('a drilldown id obtained by A1 reveals nothing of A1 elsewhere', async () => {
    const seg = await t.get(GETS[3]!, as(A1));
    const point = (seg.json as Array<{ points: Array<{ total: number; drilldown_id: string }> }>)[0]!
      .points[1]!;
    expect(point.total).toBe(2);
    const path = `/bc/v1/db/retrieve_data?id=${point.drilldown_id}`;
    expect((await t.get(path, as(A1))).json).toMatchObject({
      kind: 'users',
      total: 1,
      rows: [{ id: 'alice', traits: { secret: SECRET.A1 } }],
    });
    const elsewhere = await get(path);
    expect(elsewhere).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect(JSON.stringify(elsewhere.json)).not.toContain(SECRET.A1);
  });

  it("identify and alias of A1's ids create or see nothing of A1's", async () => {
    const mine = userRecordSchema.parse(
      (await t.post('/bc/v1/user/identify', { id: 'alice' }, as(other))).json,
    );
    const a1 = userRecordSchema.parse((await t.post('/bc/v1/user/identify', { id: 'alice' }, as(A1))).json);
    expect(mine.user_id).not.toBe(a1.user_id);
    expect(mine.app_id).toBe(other.project);
    expect(mine.traits).toEqual({ secret: other === B ? SECRET.B : SECRET.A2 });
    const fresh = await t.post('/bc/v1/user/identify', { id: 'a1-only-id' }, as(A1));
    expect(fresh.status).toBe(200);
    expect(
      (await t.post('/bc/v1/user/alias', { id: 'stolen', previous_id: 'a1-only-id' }, as(other))).status,
    ).toBe(404);
    // Ending A1's session id from elsewhere touches only the caller's own (or no) session.
    await t.post(
      '/bc/v1/events/event/end-session',
      { type: 'end_session', session_id: 'a-only-s' },
      as(other),
    );
    const after = (await snapshot(t, A1.project, A1.key)) as { tables: { sessions: unknown } };
    expect(after.tables.sessions).toEqual((beforeA as { tables: { sessions: unknown } }).tables.sessions);
  });
});

describe('live-event sockets (issue 17)', () => {
  it("a socket hears only its own project's frames and refusals, even of a session id other tenants use", async () => {
    const base = t.url.replace(/^http/, 'ws');
    const open = async (w: Who, session?: string) =>
      openSocket(base, { Authorization: `Bearer ${await realtimeKey(t, session, as(w))}` });
    const tenants: Array<[Who, string]> = [
      [A1, SECRET.A1],
      [A2, SECRET.A2],
      [B, SECRET.B],
    ];
    const project = new Map<Who, SdkSocket>();
    const session = new Map<Who, SdkSocket>();
    for (const [w] of tenants) {
      project.set(w, await open(w));
      session.set(w, await open(w, 'shared-s'));
    }
    try {
      for (const [w, secret] of tenants) {
        const event = {
          type: 'track',
          event: `${secret} Live`,
          session_id: 'shared-s',
          user_id: 'alice',
          timestamp: ts(30),
          properties: { secret },
        };
        expect((await t.post('/bc/v1/events/queue', [event], as(w))).status).toBe(200);
        expect((await t.post('/bc/v1/events/queue', [{ ...event, type: secret }], as(w))).status).toBe(400);
      }
      for (const [w, secret] of tenants) {
        for (const socket of [project.get(w)!, session.get(w)!]) {
          const deadline = Date.now() + 10_000;
          while (!socket.frames.some((f) => f.event === 'MLError') && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 50));
          }
          const text = JSON.stringify(socket.frames);
          expect(text).toContain(`${secret} Live`);
          for (const [, other] of tenants) if (other !== secret) expect(text).not.toContain(other);
          expect(new Set(socket.frames.map((f) => f.app_id))).toEqual(new Set([w.project]));
          expect(socket.frames.filter((f) => f.event === 'MLError')).toHaveLength(1);
        }
      }
      // A key names its project: asking for another one on the socket is refused like a bad key.
      const key = await realtimeKey(t, undefined, as(B));
      await expect(
        openSocket(base, { Authorization: `Bearer ${key}`, 'X-App-ID': A1.project }),
      ).rejects.toMatchObject({
        status: 401,
      });
    } finally {
      for (const s of [...project.values(), ...session.values()]) s.ws.terminate();
    }
  });
});
