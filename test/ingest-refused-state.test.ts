import { afterEach, describe, expect, it } from 'vitest';
import { queue, storedEvents } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * Derived sessions (the import extension's session_key) replayed in ways only a client nobody here
 * wrote sends: each was a 500 (found by fuzzing the queue route).
 */
const services: TestService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
});

async function service() {
  const t = await startTestService();
  services.push(t);
  const ok = async (events: unknown) => {
    const res = await queue(t, events);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };
  return { t, ok };
}

const GAP = 1_800_000;
const turn = (session: string, ts: string, extra: Record<string, unknown> = {}) => ({
  type: 'track',
  event: 'Conversation Turn',
  properties: { user: 'u', assistant: 'a' },
  session_id: session,
  session_key: 'T',
  timestamp: ts,
  user_id: 'u-T',
  ...extra,
});

describe('derived sessions replayed', () => {
  it('a refused request leaves nothing behind that the next one trips on', async () => {
    const { t, ok } = await service();
    await ok([turn('T-x', '2026-11-25T16:06:06Z')]);
    await ok([
      {
        type: 'end_session',
        session_id: 'T-y',
        session_key: 'T',
        timestamp: '2026-11-26T05:29:53Z',
        user_id: 'u-T',
      },
    ]);
    await ok([turn('T-x', '2026-11-27T05:19:07Z', { conversation_id: 'c1' })]);
    const end = { type: 'end_session', session_id: 'T-y', session_key: 'T', session_gap_ms: GAP };
    const refused = await queue(t, [
      { ...end, timestamp: '2026-11-26T04:59:50Z' },
      { type: 'track', event: 'Clicked', session_id: 'new-T', timestamp: '2026-11-28T09:53:10Z' },
    ]);
    expect(refused.status).toBe(400);
    await ok([turn('T-y', '2026-11-26T01:34:10Z', { session_gap_ms: GAP })]);
    // The same requests without the refused one store the same rows.
    const other = await service();
    await other.ok([turn('T-x', '2026-11-25T16:06:06Z')]);
    await other.ok([
      {
        type: 'end_session',
        session_id: 'T-y',
        session_key: 'T',
        timestamp: '2026-11-26T05:29:53Z',
        user_id: 'u-T',
      },
    ]);
    await other.ok([turn('T-x', '2026-11-27T05:19:07Z', { conversation_id: 'c1' })]);
    await other.ok([turn('T-y', '2026-11-26T01:34:10Z', { session_gap_ms: GAP })]);
    const rows = async (s: TestService) =>
      (await storedEvents(s)).map((e) => [
        e.event_id.replace(/^[^#]*/, ''),
        e.event,
        e.session_id,
        e.timestamp,
      ]);
    expect(await rows(t)).toEqual(await rows(other.t));
  });

  it("one request reopening a stored session both by its id and by its key's gap", async () => {
    const { t, ok } = await service();
    const event = { type: 'track', event: 'A', session_id: 'k1', session_key: 'k1', user_id: 'k1' };
    await ok([{ ...event, timestamp: '2026-11-28T12:00:00Z' }]);
    await ok([
      { ...event, timestamp: '2026-11-28T11:00:00Z' },
      { ...event, timestamp: '2026-11-28T13:00:00Z', session_gap_ms: 7_200_000 },
    ]);
    const stored = (await storedEvents(t)).filter((e) => e.event === 'A');
    expect(stored.map((e) => e.timestamp)).toEqual([
      '2026-11-28T11:00:00.000Z',
      '2026-11-28T12:00:00.000Z',
      '2026-11-28T13:00:00.000Z',
    ]);
    expect(new Set(stored.map((e) => e.session_id)).size).toBe(1);
  });
  it('one request reopening two stored sessions by their ids and both by their key', async () => {
    const { t, ok } = await service();
    const event = (session: string, timestamp: string, extra: Record<string, unknown> = {}) => ({
      type: 'track',
      event: 'A',
      session_id: session,
      session_key: 'K',
      user_id: 'k-user',
      timestamp,
      ...extra,
    });
    await ok([event('k1', '2026-11-28T12:00:00Z')]);
    await ok([event('k2', '2026-11-28T14:00:00Z')]);
    await ok([
      event('k1', '2026-11-28T11:00:00Z'),
      event('k2', '2026-11-28T13:30:00Z'),
      event('k3', '2026-11-28T13:00:00Z', { session_gap_ms: 3 * 3_600_000 }),
    ]);
    const stored = (await storedEvents(t)).filter((e) => e.event === 'A');
    expect(stored.map((e) => e.timestamp)).toEqual([
      '2026-11-28T11:00:00.000Z',
      '2026-11-28T12:00:00.000Z',
      '2026-11-28T13:00:00.000Z',
      '2026-11-28T13:30:00.000Z',
      '2026-11-28T14:00:00.000Z',
    ]);
    expect(new Set(stored.map((e) => e.session_id)).size).toBe(1);
  });
});
