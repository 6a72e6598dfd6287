import { afterAll, describe, expect, it } from 'vitest';
import { EventIdFilter } from '../src/service/ingest/known-ids.js';
import { at, byName, queue, storedEvents, turn, userById } from './helpers/ingest.js';
import { startServiceOn } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir();
const usersDir = tempDir();
const idsDir = tempDir();
const bomDir = tempDir();
afterAll(() => {
  dir.cleanup();
  usersDir.cleanup();
  idsDir.cleanup();
  bomDir.cleanup();
});

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

  it("knows every stored event_id before and after its filter of them is loaded (deferred for a restart's first requests)", async () => {
    // One more request than the filter is deferred for, and one after: each re-sends a stored
    // caller id and an id the service gave an event sent without one, beside a new event.
    const requests = EventIdFilter.LOAD_AFTER + 2;
    const stored = (i: number) => turn(`ids-${i}`, at(i), {}, { event_id: `stored-${i}`, user_id: `u-${i}` });
    const clicked = (i: number) => ({
      type: 'track',
      event: 'Clicked',
      session_id: `ids-${i}`,
      timestamp: at(i),
    });
    const before = await startServiceOn(idsDir.path);
    let given: string[];
    try {
      const first = await queue(
        before,
        [...Array(requests).keys()].flatMap((i) => [stored(i), clicked(i)]),
      );
      expect(first.json).toEqual({ status: 'ok', accepted: 2 * requests, duplicates: 0 });
      const rows = await storedEvents(before);
      given = [...Array(requests).keys()].map((i) => {
        const row = rows.find((r) => r.session_id === `ids-${i}` && r.event === 'Clicked');
        if (!row?.event_id) throw new Error(`no Clicked row in ids-${i}`);
        return row.event_id;
      });
    } finally {
      await before.stop();
    }
    const after = await startServiceOn(idsDir.path);
    try {
      for (let i = 0; i < requests; i++) {
        const res = await queue(after, [
          stored(i),
          { ...clicked(i), event_id: given[i] },
          turn(`ids-${i}`, at(i + 1), {}, { event_id: `new-${i}` }),
        ]);
        expect(res.json, `request ${i}`).toEqual({ status: 'ok', accepted: 1, duplicates: 2 });
      }
      const rows = await storedEvents(after);
      expect(rows.filter((r) => r.event === 'Conversation Turn')).toHaveLength(2 * requests);
      expect(rows.filter((r) => r.event === 'Clicked')).toHaveLength(requests);
    } finally {
      await after.stop();
    }
  });

  it('knows a stored event_id, user and session that begin with U+FEFF, before and after its filter is loaded', async () => {
    // The driver's text decoder dropped a leading U+FEFF from what it read: a stored "\uFEFFbom-1"
    // never matched its re-sent copy, which was stored again each time (found by probing).
    const event = (n: number) =>
      turn('\uFEFFbom-s', at(n), {}, { event_id: `\uFEFFbom-${n}`, user_id: '\uFEFFbom-u' });
    const before = await startServiceOn(bomDir.path);
    try {
      expect((await queue(before, [event(0)])).json).toEqual({ status: 'ok', accepted: 1, duplicates: 0 });
      expect((await queue(before, [event(0)])).json).toEqual({ status: 'ok', accepted: 0, duplicates: 1 });
    } finally {
      await before.stop();
    }
    const after = await startServiceOn(bomDir.path);
    try {
      for (let i = 1; i <= EventIdFilter.LOAD_AFTER + 1; i++) {
        const res = await queue(after, [event(0), event(i)]);
        expect(res.json, `request ${i}`).toEqual({ status: 'ok', accepted: 1, duplicates: 1 });
      }
      const rows = await storedEvents(after);
      expect(rows.filter((r) => r.event === 'Conversation Turn')).toHaveLength(EventIdFilter.LOAD_AFTER + 2);
      expect(new Set(rows.map((r) => r.session_id))).toEqual(new Set(['\uFEFFbom-s']));
      expect(byName(rows, 'Session Started')).toHaveLength(1);
      expect((await userById(after, '\uFEFFbom-u')).id).toBe('\uFEFFbom-u');
    } finally {
      await after.stop();
    }
  });

  it('keeps the stored users that one request changed differently: the traits of one, an earlier start of another', async () => {
    const before = await startServiceOn(usersDir.path);
    try {
      await queue(before, [
        { type: 'identify', id: 'mix-a', traits: { plan: 'free', seats: 1 }, timestamp: at(10) },
      ]);
      await queue(before, [
        { type: 'start_session', session_id: 'mix-b-late', user_id: 'mix-b', timestamp: at(100) },
      ]);
      const res = await queue(before, [
        { type: 'identify', id: 'mix-a', traits: { plan: 'pro' }, timestamp: at(200) },
        { type: 'start_session', session_id: 'mix-b-early', user_id: 'mix-b', timestamp: at(40) },
      ]);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    } finally {
      await before.stop();
    }
    // Read back from the database, not from the cache that planned the change.
    const after = await startServiceOn(usersDir.path);
    try {
      const [a, b] = [await userById(after, 'mix-a'), await userById(after, 'mix-b')];
      expect(a.traits).toEqual({ plan: 'pro', seats: 1 });
      expect(a.created_at).toBe(at(10));
      expect(b.created_at).toBe(at(40));
      expect(b.traits).toEqual({});
    } finally {
      await after.stop();
    }
  });
});
