import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatsResponseSchema, propertyStatsResponseSchema } from '../src/shared/event-stats.js';
import { liveEventsResponseSchema, type StoredEvent } from '../src/shared/events.js';
import { at, queue } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * Our extension routes /summary/event-stats and /summary/property-stats on generated data, against
 * counts made here from the stored rows as live events lists them (another route, plain rows).
 */

let t: TestService;
let stored: StoredEvent[];

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

beforeAll(async () => {
  t = await startTestService();
  const next = random(18);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const events = Array.from({ length: 300 }, (_, i) => {
    const properties: Record<string, unknown> = { plan: pick(['free', 'pro', 'team', 'pro']) };
    if (next() < 0.7) properties.amount = pick([5, 10, 10, 12.5]);
    if (next() < 0.3) properties.flag = next() < 0.5;
    if (next() < 0.2) properties.tags = ['a', 'b'];
    if (next() < 0.1) properties.amount = 'ten';
    const user = `u${Math.floor(next() * 20)}`;
    return {
      type: 'track',
      event: pick(['Purchase', 'Purchase', 'Signup', 'Page Viewed']),
      user_id: user,
      session_id: `s-${user}`,
      timestamp: at(i * 600 + Math.floor(next() * 500)),
      properties,
    };
  });
  const sorted = events.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  expect((await queue(t, sorted)).status).toBe(200);
  const res = await t.get('/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&limit=10000');
  stored = liveEventsResponseSchema.parse(res.json);
});
afterAll(() => t.stop());

describe('GET /bc/v1/summary/event-stats (our extension)', () => {
  it('gives every stored name its rows, people, first and last time', async () => {
    const res = await t.get('/bc/v1/summary/event-stats');
    expect(res.status).toBe(200);
    const stats = eventStatsResponseSchema.parse(res.json);
    const names = [...new Set(stored.map((e) => e.event))].sort();
    expect(stats.map((s) => s.event)).toEqual(names);
    for (const stat of stats) {
      const rows = stored.filter((e) => e.event === stat.event);
      const times = rows.map((e) => Date.parse(e.timestamp)).sort((a, b) => a - b);
      expect(stat.count, stat.event).toBe(rows.length);
      expect(stat.users, stat.event).toBe(new Set(rows.map((e) => e.user_id)).size);
      expect(Date.parse(stat.first)).toBe(times[0]);
      expect(Date.parse(stat.last)).toBe(times.at(-1));
    }
  });

  it('filters names with an RE2 regex run in the database, and names a bad one', async () => {
    const res = await t.get(`/bc/v1/summary/event-stats?event_regex=${encodeURIComponent('^P')}`);
    expect(eventStatsResponseSchema.parse(res.json).map((s) => s.event)).toEqual(['Page Viewed', 'Purchase']);
    const bad = await t.get(`/bc/v1/summary/event-stats?event_regex=${encodeURIComponent('(')}`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('event_regex');
  });

  it('needs a key like every route', async () => {
    const res = await fetch(`${t.url}/bc/v1/summary/event-stats`);
    expect(res.status).toBe(401);
  });
});

describe('GET /bc/v1/summary/property-stats (our extension)', () => {
  it('counts each property of the event, its JSON types and most frequent scalar values', async () => {
    const res = await t.get('/bc/v1/summary/property-stats?event_name=Purchase&top=3');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const stats = propertyStatsResponseSchema.parse(res.json);
    const rows = stored.filter((e) => e.event === 'Purchase').map((e) => e.properties ?? {});
    const keys = [...new Set(rows.flatMap((p) => Object.keys(p)))];
    const typeOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
    const expected = keys.map((key) => {
      const values = rows.filter((p) => key in p).map((p) => p[key]);
      const tally = new Map<string, number>();
      for (const v of values)
        if (!['array', 'object', 'null'].includes(typeOf(v)))
          tally.set(JSON.stringify(v), (tally.get(JSON.stringify(v)) ?? 0) + 1);
      const types = new Map<string, number>();
      for (const v of values) types.set(typeOf(v), (types.get(typeOf(v)) ?? 0) + 1);
      return {
        property: key,
        count: values.length,
        types: [...types].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k),
        distinct: new Set(values.map((v) => JSON.stringify(v))).size,
        top: [...tally]
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .slice(0, 3)
          .map(([v, n]) => ({ value: JSON.parse(v), count: n })),
      };
    });
    expected.sort((a, b) => b.count - a.count || (a.property < b.property ? -1 : 1));
    expect(stats).toEqual(expected);
    expect(stats.find((s) => s.property === 'amount')?.types).toEqual(['number', 'string']);
  });

  it('answers an unknown event with no properties, and names a missing event_name', async () => {
    expect((await t.get('/bc/v1/summary/property-stats?event_name=Nope')).json).toEqual([]);
    const res = await t.get('/bc/v1/summary/property-stats');
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toContain('event_name');
  });
});
