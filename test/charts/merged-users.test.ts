import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed } from '../helpers/seed.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * decisions §6: users are counted as identified users, merged anonymous data included. A device
 * first used anonymously, then identified as alice, is one person in every chart.
 */

let t: TestService;
const range = { start: '2025-03-09', end: '2025-03-12', period: 'day', tz: 'UTC' };

async function chart<T>(kind: string, controls: object): Promise<T> {
  const res = await t.get(
    `/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}`,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as T;
}

beforeAll(async () => {
  t = await startTestService(undefined, { limits: { chartRatePerSecond: 10_000, chartBurst: 10_000 } });
});
afterAll(() => t.stop());

describe('merged anonymous users count once', () => {
  it('through the identify route: device history before identify is the person’s', async () => {
    const anon = (await t.post('/bc/v1/user/identify', { device_id: 'dev-1' })).json as { user_id: string };
    const alice = (await t.post('/bc/v1/user/identify', { id: 'alice', traits: { plan: 'pro' } })).json as {
      user_id: string;
    };
    // Events as ingestion stores them: user_id is the service user at ingest time.
    await seed(t.service.db, t.projectId, {
      sessions: [
        { session_id: 'a1', user_id: anon.user_id, started_at: '2025-03-09T10:00:00Z' },
        { session_id: 'b1', user_id: alice.user_id, started_at: '2025-03-10T10:00:00Z' },
      ],
      events: [
        { event: 'Turn', ts: '2025-03-09T10:00:00Z', user_id: anon.user_id, session_id: 'a1' },
        { event: 'Turn', ts: '2025-03-10T10:00:00Z', user_id: alice.user_id, session_id: 'b1' },
        { event: 'Turn', ts: '2025-03-10T11:00:00Z', user_id: anon.user_id, session_id: 'a1' },
      ],
    });
    const before = await chart<Array<{ points: Array<{ unique: number }> }>>('segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn' }],
    });
    expect(before[0]!.points.map((p) => p.unique)).toEqual([1, 2, 0]);

    const linked = await t.post('/bc/v1/user/identify', { id: 'alice', device_id: 'dev-1' });
    expect(linked.status).toBe(200);

    const seg = await chart<Array<{ points: Array<{ unique: number; total: number }> }>>('segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn' }],
    });
    expect(seg[0]!.points.map((p) => [p.total, p.unique])).toEqual([
      [1, 1],
      [2, 1],
      [0, 0],
    ]);
    const comp = await chart<{ slices: Array<{ label: string; value: number }> }>('user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
    });
    expect(comp.slices).toEqual([expect.objectContaining({ label: 'pro', value: 1, percent: 100 })]);
    // The anonymous first session makes alice's cohort day the 9th; she returns on the 10th.
    const [ret] = await chart<Array<{ row_headers: number[]; rows: Array<Array<{ count: number }>> }>>(
      'retention',
      {
        range,
        startingEvent: { event_name: 'Turn' },
      },
    );
    expect(ret!.row_headers).toEqual([1, 0, 0]);
    expect(ret!.rows[0]!.map((c) => c.count)).toEqual([1, 1, 0]);
    const ses = await chart<{ groups: Array<{ group: string; points: Array<{ sessions: number }> }> }>(
      'session',
      {
        range,
        groupBy: { trait_name: 'plan' },
      },
    );
    expect(ses.groups.map((g) => [g.group, g.points.map((p) => p.sessions)])).toEqual([['pro', [1, 1, 0]]]);
  });

  it('through ingestion: a device-only session, then identify, is one person in every chart', async () => {
    await t.service.tenants.provision({ apiKey: t.apiKey, projectId: 'imported' });
    const headers = { 'x-app-id': 'imported' };
    const queue = await t.post(
      '/bc/v1/events/queue',
      [
        { type: 'start_session', session_id: 'd-1', device_id: 'dev-9', timestamp: '2025-03-09T10:00:00Z' },
        { type: 'track', event: 'Search', session_id: 'd-1', timestamp: '2025-03-09T10:00:05Z' },
        { type: 'end_session', session_id: 'd-1', timestamp: '2025-03-09T10:01:00Z' },
        { type: 'start_session', session_id: 'd-2', device_id: 'dev-9', timestamp: '2025-03-10T10:00:00Z' },
        {
          type: 'identify',
          session_id: 'd-2',
          id: 'zoe',
          traits: { plan: 'team' },
          timestamp: '2025-03-10T10:00:01Z',
        },
        { type: 'track', event: 'Search', session_id: 'd-2', timestamp: '2025-03-10T10:00:05Z' },
        { type: 'end_session', session_id: 'd-2', timestamp: '2025-03-10T10:02:00Z' },
      ],
      headers,
    );
    expect(queue.status, JSON.stringify(queue.json)).toBe(200);
    const get = async <T>(kind: string, controls: object) => {
      const res = await t.get(
        `/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}`,
        headers,
      );
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json as T;
    };
    const seg = await get<
      Array<{ highlights: { average_unique_users: number }; points: Array<{ unique: number }> }>
    >('segmentation', { range: { ...range, period: 'month' }, eventFilters: [{ event_name: 'Search' }] });
    expect(seg[0]!.points.map((p) => p.unique)).toEqual([1]);
    const comp = await get<{ slices: Array<{ label: string; value: number }> }>('user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
    });
    expect(comp.slices.map((s) => [s.label, s.value])).toEqual([['team', 1]]);
    const ses = await get<{ points: Array<{ sessions: number; average_length: number }> }>('session', {
      range,
    });
    expect(ses.points.map((p) => [p.sessions, p.average_length])).toEqual([
      [1, 60],
      [1, 120],
      [0, 0],
    ]);
  });
});
