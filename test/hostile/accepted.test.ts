import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveEventsResponseSchema, type StoredEvent } from '../../src/shared/events.js';
import { userRecordSchema } from '../../src/shared/users.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Hostile-looking input that is valid: SQL text, quotes, NUL and huge strings as *data*. The service
 * must store it verbatim and stay intact. Run on a service of its own so hostile.test.ts can prove
 * that its project did not change at all.
 */

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ apiKey: 'accepted-key', projectId: 'accepted-project' });
});
afterAll(() => t.stop());

const SQL = "'; DROP TABLE events; --";
const NASTY = { [SQL]: SQL, '"': '"', '\\': '\\', $1: '$1', "it's": "Robert'); DROP TABLE users;--" };

async function stored(session: string): Promise<StoredEvent[]> {
  const res = await t.get(
    `/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&session_id=${encodeURIComponent(session)}`,
  );
  expect(res.status).toBe(200);
  return liveEventsResponseSchema.parse(res.json);
}

const track = (
  session: string,
  properties: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  type: 'track',
  event: 'Probe',
  session_id: session,
  user_id: 'probe-user',
  timestamp: '2025-03-09T12:00:00Z',
  properties,
  ...extra,
});

describe('hostile text as data is stored verbatim', () => {
  it('SQL metacharacters and quotes in property names and values', async () => {
    const res = await t.post('/bc/v1/events/queue', [track(SQL, NASTY)]);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const [probe] = (await stored(SQL)).filter((e) => e.event === 'Probe');
    expect(probe?.properties).toEqual(NASTY);
    expect(probe?.session_id).toBe(SQL);
    // The tables the text names are still there and still answer.
    const names = await t.get('/bc/v1/agg/event-names');
    expect(names.json).toEqual(expect.arrayContaining(['Probe', 'Session Started']));
  });

  it('SQL text as a caller id and in traits, through identify and alias', async () => {
    const id = "Robert'); DROP TABLE users;--";
    const made = await t.post('/bc/v1/user/identify', { id, traits: { [SQL]: SQL } });
    expect(made.status).toBe(200);
    expect(userRecordSchema.parse(made.json)).toMatchObject({ id, aliases: [id], traits: { [SQL]: SQL } });
    const aliased = await t.post('/bc/v1/user/alias', { id: '$1', previous_id: id });
    expect(aliased.json).toMatchObject({ id: '$1', aliases: [id, '$1'] });
  });

  it('escaped NUL, quotes and a near-1 MiB string as values, unicode as keys', async () => {
    const big = 'x'.repeat(1_000_000);
    const props = { nul: 'a\u0000b', empty: '', big, 'ключ 🔑': 'значение', '\u0001': '\u2028' };
    const res = await t.post('/bc/v1/events/event/track', track('s-nul', props));
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(200);
    const [probe] = (await stored('s-nul')).filter((e) => e.event === 'Probe');
    expect(probe?.properties).toEqual(props);
  });

  it('extra fields are dropped, and of duplicate keys the last one counts', async () => {
    const body = JSON.stringify(track('s-extra', { a: 1 }, { admin: true, drop: SQL }));
    const duplicated = `${body.slice(0, -1)},"event":"Probe Last"}`;
    expect((await t.post('/bc/v1/events/event', duplicated)).status).toBe(200);
    const events = await stored('s-extra');
    const probe = events.find((e) => e.event === 'Probe Last');
    expect(probe?.properties).toEqual({ a: 1 });
    expect(JSON.stringify(events)).not.toContain(SQL);
    const user = await t.post('/bc/v1/user/identify', { id: 'extra', role: 'admin', traits: { a: 1 } });
    expect(user.json).not.toHaveProperty('role');
  });

  it('leaves the service answering and every write counted', async () => {
    expect((await t.get('/healthz')).status).toBe(200);
    const ranges = encodeURIComponent(JSON.stringify([{ start: '2000-01-01', end: '2100-01-01' }]));
    const counts = await t.get(`/bc/v1/summary/event-counts?ranges=${ranges}&event_name=Probe`);
    expect(counts.json).toEqual([2]);
  });
});
