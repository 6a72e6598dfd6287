import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWireEventRaw } from '../shared/events.js';
import { mapRecord } from './mapper.js';
import { buildMappingSpec } from './mapping-spec.js';
import { planAccess } from './record-access.js';
import { SCAN_EVERY, Sessionizer } from './sessionizer.js';
import type { MappedRecord, OutEvent } from './types.js';

const built = buildMappingSpec({ tz: 'UTC' });
if (!built.ok) throw new Error(built.error);
const plan = planAccess(built.spec);
const T0 = Date.UTC(2024, 0, 1);
const MIN = 60_000;

function mapped(value: Record<string, unknown>, ordinal: number): MappedRecord {
  const out = mapRecord(
    { source: { file: 'f', line: ordinal + 1 }, ordinal, value: { format: 'jsonl', value } },
    plan,
  );
  if (!out.ok) throw new Error(out.reason);
  return out.mapped;
}
const turn = (user: string, minute: number, extra: Record<string, unknown> = {}) => ({
  kind: 'turn',
  user_id: user,
  timestamp: new Date(T0 + minute * MIN).toISOString(),
  user: `q${minute}`,
  assistant: 'a',
  ...extra,
});

/** Runs records through a sessionizer (ordinals from `from`), returning what it emitted. */
function run(values: Array<Record<string, unknown>>, options = { gapMs: 30 * MIN, noEnd: false }) {
  const events: OutEvent[] = [];
  const s = new Sessionizer(options, (e) => events.push(e));
  values.forEach((v, i) => {
    s.advance(i);
    s.add(mapped(v, i));
  });
  s.finish(values.length);
  return { events, wire: events.map((e) => JSON.parse(JSON.stringify(e.event)) as Record<string, unknown>) };
}
const names = (wire: Array<Record<string, unknown>>) =>
  wire.map((e) => `${e.event ?? e.type}@${String(e.timestamp).slice(11, 16)}`);

describe('Sessionizer', () => {
  it('splits a user into sessions by the gap and ends each conversation and session at its last record', () => {
    const { wire } = run([turn('u1', 0), turn('u2', 5), turn('u1', 10), turn('u1', 50)]);
    const u1 = wire.filter(
      (e) =>
        String(e.session_id).length > 0 &&
        wire.some((t) => t.user_id === 'u1' && t.session_id === e.session_id),
    );
    expect(names(u1)).toEqual([
      'Conversation Turn@00:00',
      'Conversation Turn@00:10',
      'Conversation Ended@00:10',
      'end_session@00:10',
      'Conversation Turn@00:50',
      'Conversation Ended@00:50',
      'end_session@00:50',
    ]);
    const sessions = new Set(u1.map((e) => e.session_id));
    expect(sessions.size).toBe(2);
    for (const e of u1.filter((x) => x.event === 'Conversation Turn'))
      expect(e.conversation_id).toBe(`${e.session_id}/1`);
    for (const e of wire) expect(parseWireEventRaw(e).ok).toBe(true);
  });

  it('derives the same ids on every run, from content rather than position', () => {
    const first = run([turn('u1', 0), turn('u1', 1)]).wire;
    const again = run([turn('u9', -500), turn('u1', 0), turn('u1', 1)]).wire.filter(
      (e) => e.user_id !== 'u9',
    );
    const ids = (w: typeof first) =>
      w.filter((e) => e.user_id === 'u1').map((e) => [e.event_id, e.session_id]);
    expect(ids(again)).toEqual(ids(first));
    expect(new Set(first.map((e) => e.event_id)).size).toBe(first.length);
  });

  it('keeps exact duplicate rows as distinct events with stable ids', () => {
    const a = run([turn('u1', 0), turn('u1', 0), turn('u1', 0)]).wire;
    const b = run([turn('u1', 0), turn('u1', 0), turn('u1', 0)]).wire;
    const turns = a.filter((e) => e.event === 'Conversation Turn');
    expect(new Set(turns.map((e) => e.event_id)).size).toBe(3);
    expect(b.map((e) => e.event_id)).toEqual(a.map((e) => e.event_id));
  });

  it('adds no end event the data already has, and none at all with --no-end', () => {
    const data = [
      turn('u1', 0, { session_id: 's1', conversation_id: 'c1' }),
      turn('u1', 1, { session_id: 's1', conversation_id: 'c2' }),
      {
        kind: 'end_conversation',
        session_id: 's1',
        conversation_id: 'c1',
        timestamp: new Date(T0 + 2 * MIN).toISOString(),
      },
      turn('u2', 0, { session_id: 's2' }),
      { kind: 'end_session', session_id: 's2', timestamp: new Date(T0 + 3 * MIN).toISOString() },
    ];
    const { wire } = run(data);
    const synthesized = wire
      .slice(data.length)
      .map((e) => `${e.event ?? e.type} ${e.session_id} ${e.conversation_id ?? ''}`);
    expect(synthesized).toEqual(['Conversation Ended s1 c2', 'end_session s1 ']);
    expect(run(data, { gapMs: 30 * MIN, noEnd: true }).wire).toHaveLength(data.length);
  });

  it('closes sessions once the watermark passes them, so memory holds only open sessions', () => {
    const events: OutEvent[] = [];
    const s = new Sessionizer({ gapMs: 30 * MIN, noEnd: false }, (e) => events.push(e));
    let maxOpen = 0;
    for (let i = 0; i < 20 * SCAN_EVERY; i++) {
      s.advance(i);
      s.add(mapped(turn(`user${i}`, i / 10), i)); // a new user every 6 s: each session has one turn
      maxOpen = Math.max(maxOpen, s.openSessions);
    }
    // 30 minutes of users (300) plus one scan interval stay open, not 20,480.
    expect(maxOpen).toBeLessThan(300 + SCAN_EVERY + 10);
    const firstEnd = events.find((e) => e.event.type === 'end_session');
    expect(firstEnd?.seq).toBe(SCAN_EVERY);
  });

  it("gives a record older than its user's open session by more than the gap a session of its own", () => {
    const { wire } = run([turn('u1', 100), turn('u1', 101), turn('u1', 0)]);
    expect(names(wire)).toEqual([
      'Conversation Turn@01:40',
      'Conversation Turn@01:41',
      'Conversation Turn@00:00',
      'Conversation Ended@00:00',
      'end_session@00:00',
      'Conversation Ended@01:41',
      'end_session@01:41',
    ]);
    expect(new Set(wire.map((e) => e.session_id)).size).toBe(2);
  });

  it('resumed from a snapshot, emits exactly what an uninterrupted run emits from there on', () => {
    // ~31 users, a record a minute with jitter: sessions split by the gap, late records, exact duplicates.
    const record = fc.record({
      user: fc.integer({ min: 0, max: 30 }),
      minute: fc.integer({ min: -90, max: 90 }),
      dup: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 3 * SCAN_EVERY }), fc.nat(), (recs, cut) => {
        const values: Array<Record<string, unknown>> = [];
        for (const [i, r] of recs.entries()) {
          values.push(r.dup && i > 0 ? values[i - 1]! : turn(`u${r.user}`, i + r.minute));
        }
        const full = run(values).events;
        const position = cut % values.length;
        const first = new Sessionizer({ gapMs: 30 * MIN, noEnd: false }, () => undefined);
        for (let i = 0; i < position; i++) {
          first.advance(i);
          first.add(mapped(values[i]!, i));
        }
        const resumed: OutEvent[] = [];
        const second = new Sessionizer(
          { gapMs: 30 * MIN, noEnd: false },
          (e) => resumed.push(e),
          first.snapshot(),
        );
        for (let i = position; i < values.length; i++) {
          second.advance(i);
          second.add(mapped(values[i]!, i));
        }
        second.finish(values.length);
        const tail = full.filter((e) => e.seq >= position);
        expect(resumed.map((e) => [e.seq, JSON.stringify(e.event)])).toEqual(
          tail.map((e) => [e.seq, JSON.stringify(e.event)]),
        );
      }),
      { numRuns: 60 },
    );
  });
});
