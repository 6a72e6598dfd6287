import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { describeDifference, type Fingerprint, fingerprint } from './helpers/fingerprint.js';
import {
  byTime,
  CRASH,
  importKilled,
  importRun,
  type JsonRecord,
  prng,
  shuffle,
  writeJsonl,
} from './helpers/import-runs.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 14's property, against the real CLI and its embedded service: importing a set of records
 * gives the same stored state (see helpers/fingerprint.ts) whatever the order of the records, how they
 * are split into runs (overlapping ones included) and a kill -9 in one of them followed by a re-run,
 * and that state is the one a single run over all records sorted by time gives.
 *
 * Each case runs the CLI 4-7 times, so only a few cases run, without shrinking (a failure prints its
 * seed and the difference; CAS_PROPERTY_SEED=<seed> replays it).
 */
const dir = tempDir('cas-import-order-');
// CAS_TEST_KEEP=1 keeps the files and data directories a failure message names.
afterAll(() => (process.env.CAS_TEST_KEEP ? undefined : dir.cleanup()));

const T0 = Date.UTC(2025, 2, 3, 8, 0, 0);
const USERS = ['u0', 'u1', 'u2'];
/**
 * A device always belongs to the same user (d0 to u0, d1 to u1). Only the last property links them
 * (sessions of the device with its user beside device-only ones): which of those comes first decides
 * whether an anonymous user is made and then merged, so it is kept apart from the others.
 */
const DEVICES = ['d0', 'd1'];
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet'];
const UTTERANCES = [
  'I love this, thank you so much!',
  'This is terrible, the app is broken again',
  'How do I reset my password?',
  'Where is my order?',
];
const INTENTS = ['reset_password', 'track_order'];

/** 'login': the device alone until the session's middle record, then the device and its user (who logs in). */
type Who = 'user' | 'device' | 'both' | 'login';
interface StepSpec {
  gapS: number;
  what: number;
  n: number;
}
interface SessionSpec {
  explicit: boolean;
  who: Who;
  person: number;
  startMin: number;
  steps: StepSpec[];
  end: boolean;
  conversations: boolean;
  /** Explicit sessions: a start_session record with attributes, and an end row whose attributes overlap them. */
  attributes: boolean;
}
interface CaseSpec {
  sessions: SessionSpec[];
  traits: boolean[];
  seed: number;
  runs: number;
}

const stepArb: fc.Arbitrary<StepSpec> = fc.record({
  // Mostly within the 30 min session gap; now and then a pause that splits a derived session.
  gapS: fc.oneof(
    { arbitrary: fc.integer({ min: 5, max: 600 }), weight: 9 },
    fc.integer({ min: 1900, max: 4000 }),
  ),
  what: fc.nat(9),
  n: fc.nat(100_000),
});

interface Shape {
  explicit: fc.Arbitrary<boolean>;
  end: fc.Arbitrary<boolean>;
  /** 'both' (a user on a device that also has device-only sessions) links devices to users. */
  who: fc.Arbitrary<Who>;
}

const sessionArb = ({ explicit, end, who }: Shape): fc.Arbitrary<SessionSpec> =>
  fc.record({
    explicit,
    who,
    person: fc.nat(2),
    startMin: fc.nat(6 * 60),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 7 }),
    end,
    conversations: fc.boolean(),
    attributes: fc.boolean(),
  });

const caseArb = (shape: Shape): fc.Arbitrary<CaseSpec> =>
  fc.record({
    sessions: fc.array(sessionArb(shape), { minLength: 2, maxLength: 6 }),
    traits: fc.array(fc.boolean(), { minLength: USERS.length, maxLength: USERS.length }),
    seed: fc.nat(),
    runs: fc.integer({ min: 2, max: 4 }),
  });

const iso = (ms: number): string => new Date(ms).toISOString();

/** The records of a case: turns, usage, function calls and custom events, end rows, identify records. */
function recordsOf(c: CaseSpec): JsonRecord[] {
  const out: JsonRecord[] = [];
  c.traits.forEach((has, i) => {
    if (!has) return;
    out.push({
      kind: 'identify',
      id: USERS[i],
      timestamp: iso(T0 - 86_400_000 + i),
      plan: i === 0 ? 'pro' : 'free',
      seats: 1,
    });
    // A later change of plan, amid the sessions (they start in the first 6 hours): whichever run
    // brings it, the later write is kept, this or a device's before its login (below).
    out.push({ kind: 'identify', id: USERS[i], timestamp: iso(T0 + 3 * 3_600_000 + i), plan: 'team' });
  });
  c.sessions.forEach((s, k) => {
    const device = s.who === 'user' ? undefined : DEVICES[s.person % DEVICES.length];
    const paired = s.who === 'both' || s.who === 'login';
    const user = s.who === 'device' ? undefined : paired ? USERS[s.person % DEVICES.length] : USERS[s.person];
    const sessionId = s.explicit ? `S${k}` : undefined;
    const loggedIn: JsonRecord = { session_id: sessionId, user_id: user, device_id: device };
    const who: JsonRecord = s.who === 'login' ? { ...loggedIn, user_id: undefined } : loggedIn;
    const loginAt = Math.floor(s.steps.length / 2);
    let t = T0 + s.startMin * 60_000;
    const attributes = s.explicit && s.attributes;
    // What the app learns on a device before anyone logs in: traits of its anonymous user, merged by
    // time into the user's own when the device is claimed (or the user's, once it is).
    if (device !== undefined && s.who !== 'both' && s.attributes)
      out.push({
        kind: 'identify',
        device_id: device,
        timestamp: iso(t - 1000),
        os: k % 2 === 0 ? 'ios' : 'android',
        plan: 'trial',
      });
    // A stated start, before the session's first record; which run holds it, and whether the end's
    // attributes (the later in time, so they win the overlapping key) arrive before it, is the split's.
    if (attributes)
      out.push({
        kind: 'wire',
        type: 'start_session',
        timestamp: iso(t),
        ...who,
        attributes: { plan: 'start', app: `1.${k % 3}` },
      });
    s.steps.forEach((step, j) => {
      t += step.gapS * 1000 + (step.n % 1000);
      const at = { timestamp: iso(t), ...(j >= loginAt ? loggedIn : who) };
      const conversation = s.explicit && s.conversations ? `S${k}-c${step.n % 2}` : undefined;
      const n = step.n;
      if (step.what <= 5) {
        out.push({
          kind: 'turn',
          ...at,
          conversation_id: conversation,
          user: UTTERANCES[n % UTTERANCES.length],
          assistant: `Answer ${n} to question ${j}`,
          model: MODELS[n % MODELS.length],
          prompt_tokens: 10 + (n % 2000),
          completion_tokens: 5 + (n % 700),
          ...(n % 3 === 0 ? { intent: INTENTS[n % INTENTS.length] } : {}),
        });
      } else if (step.what === 6) {
        out.push({
          kind: 'usage',
          ...at,
          conversation_id: conversation,
          model: MODELS[n % MODELS.length],
          prompt_tokens: n % 500,
          completion_tokens: n % 300,
        });
      } else if (step.what <= 8) {
        out.push({
          kind: 'function',
          ...at,
          conversation_id: conversation,
          name: n % 2 === 0 ? 'lookup_order' : 'reset_password',
          args: JSON.stringify({ order: n }),
          result: JSON.stringify({ ok: n % 4 !== 0 }),
          runtime: n % 900,
          success: n % 4 !== 0,
        });
      } else {
        out.push({ kind: 'event', ...at, event: 'Feedback Given', rating: n % 5 });
      }
    });
    // An end stated in the data, after the session's last record in time.
    if (s.end)
      out.push({
        kind: 'end_session',
        timestamp: iso(t + 1000),
        ...loggedIn,
        ...(attributes ? { plan: 'end', rating: k % 5 } : {}),
      });
  });
  return out.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
}

let cases = 0;

/**
 * (a) all records sorted by time in one run into A; (b) the records shuffled, split into `runs`
 * overlapping files run in random order into B, one of them SIGKILLed once its service is up and then
 * run again. The fingerprints of A and B must be equal.
 */
async function checkCase(c: CaseSpec, label: string): Promise<void> {
  const records = recordsOf(c);
  const rand = prng(c.seed);
  // Numbered: fast-check often draws the same small seed twice, and each case needs fresh directories.
  const base = join(dir.path, `${label}-${++cases}-${c.seed}`);
  const all = writeJsonl(`${base}-all.jsonl`, byTime(records));
  const parts: JsonRecord[][] = Array.from({ length: c.runs }, () => []);
  shuffle(records, rand).forEach((r, i) => {
    // Every run gets at least one record; a quarter of the records are in two runs (overlap).
    const home = i < c.runs ? i : Math.floor(rand() * c.runs);
    parts[home]!.push(r);
    if (rand() < 0.25) parts[(home + 1 + Math.floor(rand() * (c.runs - 1))) % c.runs]!.push(r);
  });
  const files = parts.map((p, i) => writeJsonl(`${base}-run${i}.jsonl`, shuffle(p, rand)));
  const killedRun = Math.floor(rand() * c.runs);
  const killAfter = Math.floor(rand() * 500);

  const A = `${base}-A`;
  const B = `${base}-B`;
  const log: string[] = [];
  const runA = importRun([all], A).then((r) => {
    log.push(`A: exit ${r.code} ${r.stdout.replace(/\s+/g, ' ')}`);
    if (CRASH.test(r.stderr)) log.push(`A stderr: ${r.stderr}`);
    return r.code;
  });
  const runB = (async () => {
    const codes: Array<number | null> = [];
    for (const [i, file] of files.entries()) {
      // Small batches, so the kill lands among acknowledgements more often than not.
      const extra = ['--batch-size', '3'];
      if (i === killedRun) {
        const k = await importKilled([file], B, killAfter, extra);
        log.push(
          `B run ${i}: ${k.killed ? `SIGKILLed ${killAfter} ms after start` : 'ended before the kill'}`,
        );
      }
      const r = await importRun([file], B, extra);
      log.push(`B run ${i}: exit ${r.code} ${r.stdout.replace(/\s+/g, ' ')}`);
      if (CRASH.test(r.stderr) || r.code !== 0) log.push(`B run ${i} stderr: ${r.stderr.slice(0, 1500)}`);
      codes.push(r.code);
    }
    return codes;
  })();
  const [codeA, codesB] = await Promise.all([runA, runB]);
  const [a, b] = [await fingerprint(A), await fingerprint(B)];
  const context = `${label} seed ${c.seed}, ${records.length} records in ${c.runs} runs (files in ${base}-*)\n${log.join('\n')}`;
  expect(codeA, context).toBe(0);
  expect(a.counts['Conversation Turn'] ?? 0, context).toBe(records.filter((r) => r.kind === 'turn').length);
  if (JSON.stringify(a) !== JSON.stringify(b))
    expect.fail(
      `stored states differ (A: one sorted run, B: split runs)\n${describeDifference(a, b)}\n${context}`,
    );
  expect(codesB, context).toEqual(codesB.map(() => 0));
}

/** Fixed cases as rows: [explicit, who, person, start minute, steps as [gap s, what, n], end, conversations, attributes]. */
type SessionRow = [boolean, Who, number, number, Array<[number, number, number]>, boolean, boolean, boolean];
const sessionsOf = (rows: SessionRow[]): SessionSpec[] =>
  rows.map(([explicit, who, person, startMin, steps, end, conversations, attributes]) => ({
    explicit,
    who,
    person,
    startMin,
    steps: steps.map(([gapS, what, n]) => ({ gapS, what, n })),
    end,
    conversations,
    attributes,
  }));

/** Hand-made cases: a turn or an identify at a minute after T0. */
const turn = (minute: number, who: JsonRecord): JsonRecord => ({
  kind: 'turn',
  timestamp: iso(T0 + minute * 60_000),
  user: `question ${minute}`,
  assistant: 'answer',
  ...who,
});
const identifyAt = (minute: number, fields: JsonRecord): JsonRecord => ({
  kind: 'identify',
  timestamp: iso(T0 + minute * 60_000),
  ...fields,
});

/**
 * A hand-made case: all records sorted in one run into A, the given runs in order into B. The two
 * stored states must be equal; A's is returned for the case's own expectations.
 */
async function sortedAgainstRuns(label: string, runs: JsonRecord[][]): Promise<Fingerprint> {
  const base = join(dir.path, label);
  const [A, B] = [`${base}-A`, `${base}-B`];
  expect((await importRun([writeJsonl(`${base}-all.jsonl`, byTime(runs.flat()))], A)).code).toBe(0);
  for (const [i, records] of runs.entries())
    expect((await importRun([writeJsonl(`${base}-run${i}.jsonl`, records)], B)).code, `run ${i}`).toBe(0);
  const [a, b] = [await fingerprint(A), await fingerprint(B)];
  if (JSON.stringify(a) !== JSON.stringify(b))
    expect.fail(`stored states differ (A: one sorted run, B: split runs)\n${describeDifference(a, b)}`);
  return a;
}

/** Cases per property; CAS_PROPERTY_RUNS raises it for a longer search. */
const RUNS = Number(process.env.CAS_PROPERTY_RUNS ?? 2);
const SEED = process.env.CAS_PROPERTY_SEED === undefined ? undefined : Number(process.env.CAS_PROPERTY_SEED);

async function property(arb: fc.Arbitrary<CaseSpec>, label: string): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arb, (c) => checkCase(c, label)),
    { numRuns: RUNS, endOnFailure: true, ...(SEED === undefined ? {} : { seed: SEED }) },
  );
}

const separate = fc.constantFrom<Who>('user', 'device');

describe('import order, splits and kills do not change the stored state (issue 14)', () => {
  it('explicit session ids, ends added by the import', { timeout: 120_000 }, async () => {
    await property(
      caseArb({ explicit: fc.constant(true), end: fc.constant(false), who: separate }),
      'explicit',
    );
  });

  it('explicit session ids with end_session rows last in time', { timeout: 120_000 }, async () => {
    await property(
      caseArb({ explicit: fc.constant(true), end: fc.boolean(), who: separate }),
      'explicit-ends',
    );
  });

  it('derived sessions (user-only, device-only) mixed with explicit ones, end rows included', {
    timeout: 120_000,
  }, async () => {
    // Two sessions in three are derived.
    const shape = { explicit: fc.constantFrom(false, false, true), end: fc.boolean(), who: separate };
    await property(caseArb(shape), 'derived');
  });

  it('devices that log in: device-only sessions, sessions of the same device with its user, and sessions where the user logs in midway', {
    timeout: 120_000,
  }, async () => {
    const shape = {
      explicit: fc.boolean(),
      end: fc.boolean(),
      who: fc.constantFrom<Who>('user', 'device', 'both', 'login'),
    };
    await property(caseArb(shape), 'devices');
  });

  // Found by the property above on CI: a provisional end whose derived session joins a stored one
  // reached that session's user only through other events of the batch, and a failed group before it
  // had cleared the loaded users, so run 3 answered 500 (NotLoadedError). Kept as a fixed case.
  it('a provisional end that joins a stored derived session after a refused request', {
    timeout: 120_000,
  }, async () => {
    const step = (gapS: number, what: number, n: number) => ({ gapS, what, n });
    await checkCase(
      {
        sessions: [
          {
            explicit: false,
            who: 'device',
            person: 0,
            startMin: 154,
            steps: [
              step(77, 1, 40214),
              step(430, 5, 50258),
              step(399, 7, 28264),
              step(549, 5, 60363),
              step(44, 5, 36553),
              step(474, 6, 3019),
              step(190, 1, 55209),
            ],
            end: true,
            conversations: true,
            attributes: false,
          },
          {
            explicit: false,
            who: 'user',
            person: 0,
            startMin: 146,
            steps: [
              step(416, 6, 97372),
              step(413, 3, 5239),
              step(226, 2, 57587),
              step(351, 9, 89961),
              step(388, 3, 73313),
            ],
            end: false,
            conversations: false,
            attributes: false,
          },
          {
            explicit: false,
            who: 'user',
            person: 1,
            startMin: 58,
            steps: [
              step(18, 0, 56521),
              step(65, 3, 62815),
              step(466, 0, 32184),
              step(512, 8, 23300),
              step(448, 2, 66102),
              step(60, 7, 10112),
            ],
            end: false,
            conversations: true,
            attributes: false,
          },
        ],
        traits: [false, false, false],
        seed: 1307999758,
        runs: 4,
      },
      'fixed',
    );
  });

  // Found by the property above on CI: run 1 stored a session of device d0 alone (its anonymous
  // user), run 2 brought u0's earlier session that names d0, which reopened and replayed a stored
  // session of u0; the replay opened it without linking d0 to u0, so d0's sessions stayed an
  // anonymous person's where one sorted run gives them to u0. Kept as a fixed case.
  it("a replayed session that names a device links it to the session's user, merging its anonymous user", {
    timeout: 120_000,
  }, async () => {
    const sessions = sessionsOf([
      [
        false,
        'device',
        0,
        17,
        [
          [2907, 2, 9],
          [596, 0, 65573],
          [190, 3, 768],
        ],
        true,
        false,
        true,
      ],
      [
        false,
        'device',
        0,
        169,
        [
          [1903, 4, 10613],
          [597, 6, 14],
          [11, 7, 58555],
        ],
        false,
        true,
        false,
      ],
      [
        false,
        'both',
        0,
        3,
        [
          [10, 8, 4],
          [333, 0, 3],
        ],
        true,
        true,
        true,
      ],
      [false, 'user', 1, 2, [[592, 1, 54833]], true, false, true],
      [false, 'both', 1, 90, [[94, 3, 75664]], true, false, false],
      [
        false,
        'user',
        0,
        5,
        [
          [213, 4, 13],
          [12, 9, 19745],
        ],
        true,
        true,
        false,
      ],
    ]);
    await checkCase({ sessions, traits: [true, true, false], seed: 886672234, runs: 3 }, 'fixed-device');
  });

  // Found by a longer search of the property above (CAS_PROPERTY_RUNS=40) after the case before was
  // mended: one run filled in a session's device from a later event without linking it, while split
  // runs opened a session with that event and linked it. Any event of an identified user's session
  // naming a device now links it.
  it("a device named after a session's first event is linked all the same", {
    timeout: 120_000,
  }, async () => {
    const sessions = sessionsOf([
      [false, 'user', 0, 59, [[42, 7, 89548]], false, false, false],
      [
        false,
        'both',
        0,
        81,
        [
          [204, 0, 6911],
          [390, 9, 65092],
          [302, 0, 77365],
          [259, 9, 2635],
          [279, 8, 47991],
          [102, 0, 45012],
        ],
        false,
        true,
        false,
      ],
      [
        false,
        'user',
        0,
        290,
        [
          [81, 0, 74767],
          [543, 4, 21917],
          [596, 0, 94019],
        ],
        false,
        true,
        false,
      ],
      [
        true,
        'user',
        0,
        223,
        [
          [542, 8, 90729],
          [66, 1, 33009],
          [324, 7, 91649],
          [411, 9, 4496],
          [206, 7, 63104],
          [311, 3, 64997],
        ],
        true,
        false,
        true,
      ],
      [
        false,
        'device',
        0,
        42,
        [
          [496, 5, 11936],
          [316, 8, 95302],
          [532, 6, 86295],
        ],
        true,
        true,
        false,
      ],
      [false, 'user', 1, 152, [[591, 7, 14292]], true, false, false],
    ]);
    await checkCase({ sessions, traits: [true, false, false], seed: 1330531786, runs: 3 }, 'fixed-later');
  });

  // The generator never names two devices in one session; found by hand after the case before. The
  // event that identifies an anonymous session linked only the session's device, while the same event
  // opening the session (a run holding only it) linked its own.
  it("the event that identifies an anonymous session links its own device, not only the session's", {
    timeout: 120_000,
  }, async () => {
    const anonymous = turn(0, { session_id: 'S', device_id: 'd0' });
    const login = turn(1, { session_id: 'S', user_id: 'u0', device_id: 'd1' });
    // The later record alone first, so it opens the session; the earlier one replays it.
    const a = await sortedAgainstRuns('second-device', [[login], [anonymous]]);
    expect(a.users).toEqual([expect.stringContaining('"devices":["d0","d1"]')]);
  });

  // Traits were last-write-wins by arrival, so an older export imported after a newer one put back
  // the older plan. Each trait now keeps the write with the later time, stored across runs.
  it('an older identify imported after a newer one keeps the newer traits', {
    timeout: 120_000,
  }, async () => {
    const older = identifyAt(0, { id: 'u0', plan: 'free', seats: 1 });
    const newer = identifyAt(24 * 60, { id: 'u0', plan: 'pro' });
    const a = await sortedAgainstRuns('traits', [[newer], [older]]);
    expect(a.users).toEqual([expect.stringContaining('"traits":{"plan":"pro","seats":1}')]);
  });

  // A merge kept the identified user's own traits over the anonymous user's, so whether the user's
  // own write had arrived before the merge decided the plan. The later write wins there too.
  it("a device's traits merge by time into the user who logs in on it", { timeout: 120_000 }, async () => {
    const own = identifyAt(180, { id: 'u0', plan: 'team' });
    const onDevice = identifyAt(300, { device_id: 'd0', plan: 'trial', os: 'ios' });
    const session = [
      turn(301, { session_id: 'S', device_id: 'd0' }),
      turn(302, { session_id: 'S', user_id: 'u0', device_id: 'd0' }),
    ];
    // The login merges the device's user into u0 before u0's own (older) write of the plan arrives.
    const a = await sortedAgainstRuns('merge-traits', [[onDevice, ...session], [own]]);
    expect(a.users).toEqual([expect.stringContaining('"traits":{"os":"ios","plan":"trial"}')]);
  });

  // Likewise the primary id was the last alias to arrive. Aliases are not generated above: one that
  // arrives before any record of its previous id is refused (404), which a split can cause.
  it('an older alias imported after a newer one leaves the newer id primary', {
    timeout: 120_000,
  }, async () => {
    const user = identifyAt(0, { id: 'u0', plan: 'free' });
    const alias = (day: number, id: string): JsonRecord => ({
      kind: 'alias',
      id,
      previous_id: 'u0',
      timestamp: iso(T0 + day * 86_400_000),
    });
    // Run 2 updates the stored user's primary id and its time; run 3's older alias must lose to both.
    const a = await sortedAgainstRuns('alias', [
      [user, alias(1, 'u0@old')],
      [alias(3, 'u0@new')],
      [alias(2, 'u0@mid')],
    ]);
    expect(a.users).toEqual([expect.stringContaining('"primary_id":"u0@new"')]);
  });
});
