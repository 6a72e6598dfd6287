import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveEventsResponseSchema } from '../src/shared/events.js';
import { at, queue, turn } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  const events = [
    { type: 'start_session', session_id: 'read-a', user_id: 'reader', timestamp: at(0) },
    turn('read-a', at(10), {}, { conversation_id: 'ca' }),
    { type: 'track', event: 'Page Viewed', session_id: 'read-a', timestamp: at(20) },
    { type: 'start_session', session_id: 'read-b', device_id: 'reader-device', timestamp: at(3600) },
    ...Array.from({ length: 200 }, (_, i) => ({
      type: 'track',
      event: 'Tick',
      session_id: 'read-b',
      timestamp: at(3601 + i),
    })),
  ];
  expect((await queue(t, events)).status).toBe(200);
});
afterAll(() => t.stop());

const live = (query: string) => t.get(`/bc/v1/live-events/events?${query}`);

describe('GET /bc/v1/live-events/events', () => {
  it('lists newest first, 150 by default, within start <= ts < end, optionally one session', async () => {
    const all = liveEventsResponseSchema.parse((await live('start=2025-03-09&end=2025-03-10')).json);
    expect(all).toHaveLength(150);
    expect(all[0]).toMatchObject({
      event: 'Tick',
      timestamp: at(3800),
      app_id: 'test-project',
      session_id: 'read-b',
    });
    const times = all.map((e) => Date.parse(e.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const a = liveEventsResponseSchema.parse(
      (await live(`start=${at(0)}&end=${at(20)}&session_id=read-a`)).json,
    );
    expect(a.map((e) => e.event)).toEqual(['Conversation Turn', 'Conversation Started', 'Session Started']);
    expect(a[0]).toMatchObject({ user_id: 'reader', conversation_id: 'ca' });
    expect(a[1]!.origin_event_id).toBe(a[0]!.event_id);
  });

  it('takes up to 10,000 and names bad parameters', async () => {
    expect(
      liveEventsResponseSchema.parse((await live('start=2025-01-01&end=2026-01-01&limit=10000')).json),
    ).toHaveLength(205);
    const tooMany = await live('start=2025-01-01&end=2026-01-01&limit=10001');
    expect(tooMany.status).toBe(400);
    expect(tooMany.json).toMatchObject({ issues: [{ path: 'limit' }] });
    const noStart = await live('end=2026-01-01');
    expect(noStart.status).toBe(400);
    expect(noStart.json).toMatchObject({ issues: [{ path: 'start' }] });
    expect((await live('start=yesterday&end=2026-01-01')).status).toBe(400);
  });
});

describe('GET /bc/v1/summary/event-counts', () => {
  const counts = async (query: string) => {
    const res = await t.get(`/bc/v1/summary/event-counts?${query}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  };

  it('counts every stored row (generated included) once per range, in the order given', async () => {
    const ranges = [
      { start: at(0), end: at(3600), period: 'day', tz: 'UTC' },
      { start: at(3600), end: at(3700) },
      { start: '2024-01-01T00:00:00Z', end: '2024-01-02T00:00:00Z' },
    ];
    expect(await counts(`ranges=${encodeURIComponent(JSON.stringify(ranges))}`)).toEqual([4, 100, 0]);
    const one = encodeURIComponent(JSON.stringify([{ start: at(0), end: at(99999) }]));
    expect(await counts(`ranges=${one}&event_name=Tick`)).toEqual([200]);
    expect(await counts(`ranges=${one}&session_id=read-a&conversation_id=ca`)).toEqual([2]);
  });

  it('reads the bracket form and names a bad range', async () => {
    expect(
      await counts(
        `ranges[0][start]=${at(0)}&ranges[0][end]=${at(3600)}&ranges[1][start]=${at(0)}&ranges[1][end]=${at(1)}`,
      ),
    ).toEqual([4, 1]);
    const res = await t.get(
      `/bc/v1/summary/event-counts?ranges=${encodeURIComponent(JSON.stringify([{ start: at(5), end: at(1) }]))}`,
    );
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ issues: [{ path: 'ranges[0].end' }] });
    expect((await t.get('/bc/v1/summary/event-counts')).status).toBe(400);
  });
});

describe('GET /bc/v1/agg/event-names', () => {
  it('lists distinct names, sorted, filtered by an RE2 regex run in DuckDB', async () => {
    expect((await t.get('/bc/v1/agg/event-names')).json).toEqual([
      'Conversation Started',
      'Conversation Turn',
      'Page Viewed',
      'Session Started',
      'Tick',
    ]);
    expect((await t.get('/bc/v1/agg/event-names?event_regex=^Conv')).json).toEqual([
      'Conversation Started',
      'Conversation Turn',
    ]);
    expect((await t.get('/bc/v1/agg/event-names?session_id=read-b')).json).toEqual([
      'Session Started',
      'Tick',
    ]);
    const bad = await t.get('/bc/v1/agg/event-names?event_regex=(oops');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ issues: [{ path: 'event_regex' }] });
  });
});
