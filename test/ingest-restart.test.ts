import { afterAll, describe, expect, it } from 'vitest';
import { at, byName, queue, storedEvents, turn, userById } from './helpers/ingest.js';
import { startServiceOn } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

describe('state survives a restart: the ingest cache refills from the database', () => {
  it('continues an open session, its open conversation and its totals, and still knows every event_id', async () => {
    const first = [
      { type: 'start_session', session_id: 'r1', device_id: 'r-device', event_id: 'r-1', timestamp: at(0) },
      turn(
        'r1',
        at(5),
        { model: 'gpt-4o', prompt_tokens: 1000, completion_tokens: 500 },
        { event_id: 'r-2' },
      ),
      {
        type: 'track',
        event: 'Conversation Function',
        session_id: 'r1',
        event_id: 'r-3',
        timestamp: at(6),
        properties: { name: 'refund', success: false },
      },
      {
        type: 'track',
        event: 'Conversation Started',
        session_id: 'r1',
        conversation_id: 'r-second',
        event_id: 'r-4',
        timestamp: at(7),
      },
    ];
    const before = await startServiceOn(dir.path);
    expect((await queue(before, first)).json).toEqual({ status: 'ok', accepted: 4, duplicates: 0 });
    await before.stop();

    const after = await startServiceOn(dir.path);
    try {
      expect((await queue(after, first)).json).toEqual({ status: 'ok', accepted: 0, duplicates: 4 });
      const second = await queue(after, [
        turn('r1', at(8), { cost: 0.5 }, { conversation_id: 'r1/1' }),
        { type: 'identify', session_id: 'r1', id: 'r-user', timestamp: at(9) },
        { type: 'end_session', session_id: 'r1', timestamp: at(20) },
      ]);
      expect(second.status, JSON.stringify(second.json)).toBe(200);
      const events = await storedEvents(after, 'r1');
      expect(byName(events, 'Session Started')).toHaveLength(1);
      const summaries = byName(events, 'Conversation Summary');
      expect(summaries.map((s) => [s.conversation_id, s.properties?.turns])).toEqual([
        ['r1/1', 2],
        ['r-second', 0],
      ]);
      expect(summaries[0]!.properties).toMatchObject({
        cost: 0.5075,
        function_calls: 1,
        function_errors: 1,
        duration_s: 15,
      });
      expect(new Set(events.map((e) => e.user_id))).toEqual(new Set(['r-user']));
      expect((await userById(after, 'r-user')).created_at).toBe(at(0));
      expect((await queue(after, [turn('r1', at(30), {})])).status).toBe(409);
    } finally {
      await after.stop();
    }
  });
});
