import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { derivedSessionId } from '../shared/derived-session.js';
import { parseWireEventRaw } from '../shared/events.js';
import { mapRecord } from './mapper.js';
import { buildMappingSpec } from './mapping-spec.js';
import { planAccess } from './record-access.js';
import { Sessionizer, type SessionizerOptions } from './sessionizer.js';
import { compareStaged, type Staged, stage } from './staging.js';
import type { OutEvent } from './types.js';

const built = buildMappingSpec({ tz: 'UTC' });
if (!built.ok) throw new Error(built.error);
const plan = planAccess(built.spec);
const T0 = Date.UTC(2024, 0, 1);
const MIN = 60_000;
const OPTIONS: SessionizerOptions = {
  gapMs: 30 * MIN,
  noEnd: false,
  keepDuplicates: false,
  extensions: { provisionalEnds: true, derivedSessions: true },
};

function staged(value: Record<string, unknown>, ordinal: number): Staged {
  const out = mapRecord(
    { source: { file: 'f', line: ordinal + 1 }, ordinal, value: { format: 'jsonl', value } },
    plan,
  );
  if (!out.ok) throw new Error(out.reason);
  return stage(out.mapped, false);
}
const turn = (user: string, minute: number, extra: Record<string, unknown> = {}) => ({
  kind: 'turn',
  user_id: user,
  timestamp: new Date(T0 + minute * MIN).toISOString(),
  user: `q${minute}`,
  assistant: 'a',
  ...extra,
});

/** Maps, sorts (as the pipeline does) and sessionizes records; returns what was emitted. */
function run(values: Array<Record<string, unknown>>, options: Partial<SessionizerOptions> = {}) {
  const events: OutEvent[] = [];
  let duplicates = 0;
  const s = new Sessionizer(
    { ...OPTIONS, ...options },
    (e) => events.push(e),
    () => duplicates++,
  );
  const sorted = values.map(staged).sort(compareStaged);
  sorted.forEach((item, i) => {
    s.add(item, i);
  });
  s.finish();
  const wire = events.map((e) => JSON.parse(JSON.stringify(e.event)) as Record<string, unknown>);
  return { events, wire, duplicates };
}
const names = (wire: Array<Record<string, unknown>>) =>
  wire.map((e) => `${e.event ?? e.type}@${String(e.timestamp).slice(11, 16)}`);

describe('Sessionizer (over a sorted run)', () => {
  it('splits a user into sessions by the gap, named by key and start, each ended after its last record', () => {
    const { wire } = run([turn('u1', 50), turn('u2', 5), turn('u1', 10), turn('u1', 0)]);
    const u1 = wire.filter((e) => wire.some((t) => t.user_id === 'u1' && t.session_id === e.session_id));
    expect(names(u1)).toEqual([
      'Conversation Turn@00:00',
      'Conversation Turn@00:10',
      'end_session@00:10',
      'Conversation Turn@00:50',
      'end_session@00:50',
    ]);
    expect(u1.map((e) => e.session_id)).toEqual([
      ...Array(3).fill(derivedSessionId('u1', T0)),
      ...Array(2).fill(derivedSessionId('u1', T0 + 50 * MIN)),
    ]);
    for (const e of u1) {
      expect(e).toMatchObject({ session_key: 'u1', session_gap_ms: 30 * MIN });
      expect(e.conversation_id).toBeUndefined();
      expect(parseWireEventRaw(e).ok).toBe(true);
    }
    expect(u1.filter((e) => e.type === 'end_session').every((e) => e.provisional === true)).toBe(true);
  });

  it('emits the same events, ids included, whatever the order of the records', () => {
    const record = fc.record({
      user: fc.integer({ min: 0, max: 5 }),
      minute: fc.integer({ min: 0, max: 400 }),
      session: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 60 }), fc.nat(), (recs, seed) => {
        const values = recs.map((r) =>
          turn(
            `u${r.user}`,
            r.minute,
            r.session === undefined ? {} : { session_id: `s${r.session}-u${r.user}` },
          ),
        );
        const shuffled = [...values].sort(
          (a, b) =>
            ((JSON.stringify(a).length * 31 + seed) % 7) - ((JSON.stringify(b).length * 17 + seed) % 5),
        );
        const text = (w: Array<Record<string, unknown>>) => w.map((e) => JSON.stringify(e)).sort();
        expect(text(run(shuffled).wire)).toEqual(text(run(values).wire));
      }),
      { numRuns: 100 },
    );
  });

  it('gives a record the same id whichever derived session it lands in', () => {
    const alone = run([turn('u1', 40)]).wire[0]!;
    const joined = run([turn('u1', 20), turn('u1', 40)]).wire.find((e) => e.timestamp === alone.timestamp)!;
    expect(joined.session_id).not.toBe(alone.session_id);
    expect(joined.event_id).toBe(alone.event_id);
  });

  it('imports an exact duplicate record once and counts it, or keeps it numbered with --keep-duplicates', () => {
    const three = [turn('u1', 0), turn('u1', 0), turn('u1', 0)];
    const once = run(three);
    expect(once.wire.filter((e) => e.event === 'Conversation Turn')).toHaveLength(1);
    expect(once.duplicates).toBe(2);
    const kept = run(three, { keepDuplicates: true });
    const turns = kept.wire.filter((e) => e.event === 'Conversation Turn');
    expect(new Set(turns.map((e) => e.event_id)).size).toBe(3);
    expect(run(three, { keepDuplicates: true }).wire.map((e) => e.event_id)).toEqual(
      kept.wire.map((e) => e.event_id),
    );
  });

  it('orders a session by time, adds no end the data has, and none with --no-end', () => {
    const data = [
      { kind: 'end_session', session_id: 's2', timestamp: new Date(T0 + 3 * MIN).toISOString() },
      turn('u1', 1, { session_id: 's1', conversation_id: 'c2' }),
      {
        kind: 'end_conversation',
        session_id: 's1',
        conversation_id: 'c1',
        timestamp: new Date(T0 + 2 * MIN).toISOString(),
      },
      turn('u2', 0, { session_id: 's2' }),
      turn('u1', 0, { session_id: 's1', conversation_id: 'c1' }),
    ];
    const { wire } = run(data);
    expect(wire.map((e) => `${e.event ?? e.type} ${e.session_id} ${e.conversation_id ?? ''}`.trim())).toEqual(
      [
        'Conversation Turn s1 c1',
        'Conversation Turn s1 c2',
        'Conversation Ended s1 c1',
        'end_session s1',
        'Conversation Turn s2',
        'end_session s2',
      ],
    );
    expect(wire[3]).toMatchObject({ provisional: true, timestamp: new Date(T0 + 2 * MIN).toISOString() });
    expect(wire[5]!.provisional).toBeUndefined();
    expect(run(data, { noEnd: true }).wire).toHaveLength(data.length);
    const plain = run(data, { extensions: { provisionalEnds: false, derivedSessions: false } }).wire;
    expect(plain[3]!.provisional).toBeUndefined();
  });

  it('holds an end dated before anything else of its session (or conversation) until that is sent; alone, it goes as it is', () => {
    const at = (m: number) => new Date(T0 + m * MIN).toISOString();
    const { wire } = run([
      { kind: 'end_session', session_id: 's1', user_id: 'u1', timestamp: at(0) },
      { kind: 'end_session', session_id: 's1', user_id: 'u1', timestamp: at(1) },
      turn('u1', 5, { session_id: 's1', conversation_id: 'a' }),
      { kind: 'end_conversation', session_id: 's1', conversation_id: 'b', timestamp: at(6) },
      turn('u1', 7, { session_id: 's1', conversation_id: 'a' }),
      turn('u1', 8, { session_id: 's1', conversation_id: 'b' }),
      { kind: 'end_conversation', session_id: 's2', conversation_id: 'z', timestamp: at(1) },
      { kind: 'end_session', session_id: 's2', user_id: 'u2', timestamp: at(2) },
    ]);
    expect(
      wire.map((e) =>
        `${e.event ?? e.type} ${e.session_id} ${e.conversation_id ?? ''}@${String(e.timestamp).slice(14, 16)}`.trim(),
      ),
    ).toEqual([
      // The service refuses the ends sent after what they would have ended first.
      'Conversation Turn s1 a@05',
      'end_session s1 @00',
      'end_session s1 @01',
      'Conversation Turn s1 a@07',
      'Conversation Turn s1 b@08',
      'Conversation Ended s1 b@06',
      // They end nothing: the import still ends the session after its last record.
      'end_session s1 @08',
      // A session of only ends: as they are, and no end added.
      'Conversation Ended s2 z@01',
      'end_session s2 @02',
    ]);
    expect(wire[6]).toMatchObject({ provisional: true });
  });

  it('puts a user’s records without a time in one session of their own, after the timed ones', () => {
    const untimed = { kind: 'turn', user_id: 'u1', user: 'x', assistant: 'y' };
    const { wire } = run([untimed, turn('u1', 0), { ...untimed, user: 'z' }]);
    const sessions = [...new Set(wire.map((e) => e.session_id))];
    expect(sessions).toEqual([derivedSessionId('u1', T0), derivedSessionId('u1', null)]);
    expect(wire.filter((e) => e.session_id === sessions[1]).map((e) => e.session_key)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('starts a new derived session after an end_session record, even within the gap', () => {
    const end = { kind: 'end_session', user_id: 'u1', timestamp: new Date(T0 + MIN).toISOString() };
    const { wire } = run([turn('u1', 0), end, turn('u1', 2)]);
    expect(names(wire)).toEqual([
      'Conversation Turn@00:00',
      'end_session@00:01',
      'Conversation Turn@00:02',
      'end_session@00:02',
    ]);
    expect(wire[1]!.provisional).toBeUndefined();
    expect(new Set(wire.map((e) => e.session_id)).size).toBe(2);
  });
});

describe('conversation ends where ends are final (a service without our extensions)', () => {
  const HOSTED = { extensions: { provisionalEnds: false, derivedSessions: false } };
  const records = [
    turn('u', 0, { session_id: 's', conversation_id: 'c1' }),
    turn('u', 2, { session_id: 's', conversation_id: 'c1' }),
    turn('u', 5, { session_id: 's', conversation_id: 'c2' }),
    turn('u', 9, { session_id: 's', conversation_id: 'c3' }),
    {
      kind: 'end_conversation',
      session_id: 's',
      conversation_id: 'c3',
      timestamp: new Date(T0 + 10 * MIN).toISOString(),
    },
    turn('u', 12, { session_id: 's' }),
  ];

  // An end_session closes every open conversation at its own time: c1 lasted the session's 12 minutes.
  it('ends each conversation the data does not end at its last record, before the session', () => {
    const { wire } = run(records, HOSTED);
    const ends = wire.filter((e) => e.event === 'Conversation Ended' || e.type === 'end_session');
    expect(
      ends.map((e) => [e.event ?? e.type, e.conversation_id, String(e.timestamp).slice(11, 16)]),
    ).toEqual([
      ['Conversation Ended', 'c3', '00:10'],
      ['Conversation Ended', 'c1', '00:02'],
      ['Conversation Ended', 'c2', '00:05'],
      ['end_session', undefined, '00:12'],
    ]);
    for (const e of wire) expect(parseWireEventRaw(e).ok, JSON.stringify(e)).toBe(true);
    // The same ids on every run.
    expect(run(records, HOSTED).wire).toEqual(wire);
  });

  it("names the conversation of a turn without one by decisions §4's rule, as the hosted schemas require one", () => {
    const plain = [
      turn('u', 0, { session_id: 's' }),
      turn('u', 1, { session_id: 's' }),
      turn('v', 0, { session_id: 't', conversation_id: 'c1' }),
      turn('v', 1, { session_id: 't' }),
      {
        kind: 'end_conversation',
        session_id: 't',
        conversation_id: 'c1',
        timestamp: new Date(T0 + 2 * MIN).toISOString(),
      },
      turn('v', 3, { session_id: 't', conversation_id: 't/1' }),
      {
        kind: 'end_conversation',
        session_id: 't',
        conversation_id: 't/1',
        timestamp: new Date(T0 + 4 * MIN).toISOString(),
      },
      turn('v', 5, { session_id: 't' }),
    ];
    for (const noEnd of [false, true]) {
      const turns = run(plain, { ...HOSTED, noEnd }).wire.filter((e) => e.event === 'Conversation Turn');
      expect(turns.map((e) => `${e.session_id} ${e.conversation_id}`)).toEqual([
        's s/1',
        's s/1',
        't c1',
        't c1',
        't t/1',
        't t/2',
      ]);
    }
    const { wire } = run(plain, HOSTED);
    expect(wire.filter((e) => e.event === 'Conversation Ended').map((e) => e.conversation_id)).toEqual(
      expect.arrayContaining(['s/1', 't/2']),
    );
    // Our service applies the rule itself, over the whole stored session.
    const ours = run(plain).wire.filter((e) => e.event === 'Conversation Turn' && e.session_id === 's');
    expect(ours.map((e) => e.conversation_id)).toEqual([undefined, undefined]);
  });

  it('adds none with provisional ends (our service ends them itself) or with --no-end', () => {
    for (const options of [{}, { ...HOSTED, noEnd: true }]) {
      const added = run(records, options).events.filter(
        (e) => e.synthesized && e.event.type === 'end_conversation',
      );
      expect(added).toEqual([]);
    }
  });
});
