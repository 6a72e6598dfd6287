import { describe, expect, it } from 'vitest';
import { parseQueueBody } from '../../shared/events.js';
import { LexicalAnalyser } from '../analysis/lexical-analyser.js';
import { type Database, openDatabase } from '../store/database.js';
import { CACHED_PROJECTS, GROUP_EVENTS, Ingestor } from './ingestor.js';

/**
 * A project's ingest cache kept every session never ended, with every user text of its open
 * conversations, and every identity row it learned, for the service's life (found by a soak of
 * `cas serve`). It now keeps a bounded number of each; what it let go is loaded again when an event
 * names it. The same requests through a small cache and an unbounded one must store the same rows.
 */
const scope = { orgId: 'org', projectId: 'p' };
const at = (minute: number, s: number) => new Date(Date.UTC(2025, 4, 2, 9, minute, s)).toISOString();
const SESSIONS = 10;

function events(raw: unknown[], eventsPerRequest?: number) {
  const r = parseQueueBody(raw, eventsPerRequest === undefined ? {} : { eventsPerRequest });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.events;
}

const turn = (i: number, minute: number, s: number, user: string) => ({
  type: 'track',
  event: 'Conversation Turn',
  event_id: `t-${i}-${minute}-${s}`,
  session_id: `s${i}`,
  conversation_id: 'c',
  user_id: `u${i % 3}`,
  timestamp: at(minute, s),
  properties: {
    user,
    assistant: 'Sure, here is how.',
    model: 'gpt-4o-mini',
    prompt_tokens: 10,
    completion_tokens: 5,
  },
});

const opened = (i: number) => [
  turn(i, 0, i, `I want a refund for order ${i}, this is terrible`),
  turn(i, 1, i, `Still broken, order ${i} never arrived`),
];

const closed = (i: number) => [
  turn(i, 5, i, `Thanks, that fixed order ${i}!`),
  {
    type: 'track',
    event: 'Conversation Ended',
    event_id: `ce-${i}`,
    session_id: `s${i}`,
    conversation_id: 'c',
    timestamp: at(6, i),
  },
  { type: 'end_session', event_id: `es-${i}`, session_id: `s${i}`, timestamp: at(7, i) },
];

async function run(ingestor: Ingestor): Promise<{ heldAfterOpening: number[] }> {
  const heldAfterOpening: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    await ingestor.ingest(scope, events(opened(i)), Date.now());
    heldAfterOpening.push(ingestor.openSessionsHeld(scope.projectId) ?? -1);
  }
  // Sent together (groups of several requests, planned while the one before commits), first the
  // sessions let go longest ago.
  await Promise.all(
    Array.from({ length: SESSIONS }, (_, i) => ingestor.ingest(scope, events(closed(i)), Date.now())),
  );
  return { heldAfterOpening };
}

/** Users by their caller id (internal user ids are random). */
const CALLER = (table: string) =>
  `(SELECT min(u.id) FROM user_ids u WHERE u.project_id = ${table}.project_id AND u.user_id = ${table}.user_id) AS caller`;

const STATE = [
  `SELECT session_id, ${CALLER('sessions')}, started_at, ended_at, last_event_at, attributes::VARCHAR AS attributes,
          provisional_end FROM sessions WHERE project_id = 'p' ORDER BY session_id`,
  `SELECT session_id, conversation_id, started_at, ended_at, properties::VARCHAR AS properties
     FROM conversations WHERE project_id = 'p' ORDER BY session_id, conversation_id`,
  `SELECT event_id, event, type, ts, ${CALLER('events')}, session_id, conversation_id,
          properties::VARCHAR AS properties, origin_event_id
     FROM events WHERE project_id = 'p' ORDER BY ts, event, event_id`,
];

const IDENTITY = [
  `SELECT (SELECT min(i.id) FROM user_ids i WHERE i.project_id = u.project_id AND i.user_id = u.user_id) AS caller,
          primary_id, anonymous, traits::VARCHAR AS traits,
          (SELECT min(i.id) FROM user_ids i WHERE i.project_id = u.project_id AND i.user_id = u.canonical_user_id) AS canonical
     FROM users u WHERE project_id = 'p' ORDER BY primary_id`,
  `SELECT id, ${CALLER('user_ids')}, seq FROM user_ids WHERE project_id = 'p' ORDER BY id`,
  `SELECT device_id, ${CALLER('devices')} FROM devices WHERE project_id = 'p' ORDER BY device_id`,
];

async function state(db: Database, queries = STATE): Promise<unknown[][]> {
  return Promise.all(queries.map((sql) => db.read.all<Record<string, unknown>>(sql)));
}

/** The pump trims identities once it has nothing left to do, just after the last answer. */
const idle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Pair {
  bounded: Ingestor;
  reference: Ingestor;
  small: Database;
  big: Database;
}

/** A cache of the given bounds and an unbounded one, each over its own fresh store, closed after `test`. */
async function pair(
  bounds: { openSessions?: number; identities?: number },
  test: (p: Pair) => Promise<void>,
): Promise<void> {
  const small = await openDatabase(':memory:');
  const big = await openDatabase(':memory:');
  const bounded = new Ingestor(small, new LexicalAnalyser(), () => undefined, CACHED_PROJECTS, bounds);
  const reference = new Ingestor(big, new LexicalAnalyser());
  try {
    await test({ bounded, reference, small, big });
  } finally {
    bounded.close();
    reference.close();
    await small.close();
    await big.close();
  }
}

describe('open sessions in the ingest cache', () => {
  it('are let go past the bound, and one let go carries on from the database as if it had stayed', async () => {
    await pair({ openSessions: 3 }, async ({ bounded, reference, small, big }) => {
      const { heldAfterOpening } = await run(bounded);
      const unbounded = await run(reference);
      expect(Math.max(...heldAfterOpening)).toBeLessThanOrEqual(3);
      expect(unbounded.heldAfterOpening.at(-1)).toBe(SESSIONS);
      // Everything ended: nothing open is held either way.
      expect(bounded.openSessionsHeld(scope.projectId)).toBe(0);

      const [sessions, conversations, stored] = await state(small);
      expect([sessions, conversations, stored]).toEqual(await state(big));
      expect(sessions).toHaveLength(SESSIONS);
      // A conversation let go before its last turn counts the turns before it (they were replayed).
      const summaries = (stored as Array<{ event: string; properties: string }>)
        .filter((e) => e.event === 'Conversation Summary')
        .map((e) => JSON.parse(e.properties) as { turns: number });
      expect(summaries.map((p) => p.turns)).toEqual(Array(SESSIONS).fill(3));
    });
  });
});

describe('open sessions of all projects together', () => {
  it("are bounded across projects, the least recently planned project's going first, and carry on alike", async () => {
    await pair({ openSessions: 3 }, async ({ bounded, reference, small, big }) => {
      const send = (ingestor: Ingestor, projectId: string, raw: unknown[]) =>
        ingestor.ingest({ orgId: 'org', projectId }, events(raw), Date.now());
      const held = (ingestor: Ingestor) => [ingestor.openSessionsHeld('pa'), ingestor.openSessionsHeld('pb')];
      for (const ingestor of [bounded, reference]) {
        await send(ingestor, 'pa', [...opened(0), ...opened(1)]);
        await send(ingestor, 'pb', [...opened(2), ...opened(3)]);
      }
      // A bound per project held all four.
      expect(held(bounded)).toEqual([1, 2]);
      expect(held(reference)).toEqual([2, 2]);
      for (const ingestor of [bounded, reference]) {
        await send(ingestor, 'pa', [...closed(0), ...closed(1)]);
        await send(ingestor, 'pb', [...closed(2), ...closed(3)]);
      }
      const across = STATE.map((sql) => sql.replaceAll("project_id = 'p'", "project_id IN ('pa', 'pb')"));
      const [sessions, conversations, stored] = await state(small, across);
      expect([sessions, conversations, stored]).toEqual(await state(big, across));
      expect(sessions).toHaveLength(4);
      const summaries = (stored as Array<{ event: string; properties: string }>)
        .filter((e) => e.event === 'Conversation Summary')
        .map((e) => JSON.parse(e.properties) as { turns: number });
      expect(summaries.map((p) => p.turns)).toEqual([3, 3, 3, 3]);
    });
  });
});

const PEOPLE = 10;

async function people(ingestor: Ingestor): Promise<{ heldWhenIdle: number[] }> {
  const heldWhenIdle: number[] = [];
  for (let i = 0; i < PEOPLE; i++) {
    const raw = [
      {
        type: 'identify',
        event_id: `id-${i}`,
        user_id: `u${i}`,
        device_id: `d${i}`,
        timestamp: at(0, i),
        traits: { plan: 'free', n: i },
      },
      {
        ...turn(i, 1, i, 'hello'),
        event_id: `a-${i}`,
        session_id: `a${i}`,
        user_id: `u${i}`,
        device_id: `d${i}`,
      },
    ];
    await ingestor.ingest(scope, events(raw), Date.now());
    await idle();
    heldWhenIdle.push(ingestor.identitiesHeld(scope.projectId) ?? -1);
  }
  // Together: each person's device alone, a trait merge and an alias, for identities let go.
  await Promise.all(
    Array.from({ length: PEOPLE }, (_, i) =>
      ingestor.ingest(
        scope,
        events([
          {
            ...turn(i, 20, i, 'back again'),
            event_id: `b-${i}`,
            session_id: `b${i}`,
            user_id: undefined,
            device_id: `d${i}`,
          },
          {
            type: 'identify',
            event_id: `id2-${i}`,
            user_id: `u${i}`,
            timestamp: at(21, i),
            traits: { plan: 'pro' },
          },
          { type: 'alias', event_id: `al-${i}`, id: `v${i}`, previous_id: `u${i}`, timestamp: at(22, i) },
          { ...turn(i, 23, i, 'as v'), event_id: `c-${i}`, session_id: `c${i}`, user_id: `v${i}` },
        ]),
        Date.now(),
      ),
    ),
  );
  return { heldWhenIdle };
}

describe('identity rows in the ingest cache', () => {
  it('past the bound, the least recently used are forgotten once the ingest is idle, and loaded again as requests name them', async () => {
    await pair({ identities: 4 }, async ({ bounded, reference, small, big }) => {
      const { heldWhenIdle } = await people(bounded);
      const unbounded = await people(reference);
      expect(Math.max(...heldWhenIdle)).toBeLessThanOrEqual(4);
      // Trimmed, not forgotten whole: the people named last are still held.
      expect(Math.min(...heldWhenIdle)).toBeGreaterThan(0);
      expect(unbounded.heldWhenIdle.at(-1)).toBeGreaterThanOrEqual(2 * PEOPLE);
      const stored = await state(small, [...IDENTITY, ...STATE]);
      expect(stored).toEqual(await state(big, [...IDENTITY, ...STATE]));
      const [users, , devices] = stored as [
        Array<{ primary_id: string; traits: string }>,
        unknown,
        unknown[],
      ];
      // One user per person, its device linked, traits merged, the alias its primary id.
      expect(users.filter((u) => u.primary_id.startsWith('v')).map((u) => JSON.parse(u.traits))).toEqual(
        Array.from({ length: PEOPLE }, (_, i) => ({ plan: 'pro', n: i })),
      );
      expect(devices).toHaveLength(PEOPLE);
    });
  });

  it('are trimmed between groups where the ingest never idles, the state stored unchanged', async () => {
    // One request a group (two would pass GROUP_EVENTS; a service may take requests this big), all
    // waiting at once: each is planned while the one before commits, unless a trim is due.
    const size = GROUP_EVENTS / 2 + 1;
    const burst = async (ingestor: Ingestor): Promise<number[]> => {
      const held: number[] = [];
      await Promise.all(
        Array.from({ length: PEOPLE }, (_, i) =>
          ingestor
            .ingest(
              scope,
              events(
                [
                  {
                    type: 'identify',
                    event_id: `bi-${i}`,
                    user_id: `w${i}`,
                    device_id: `e${i}`,
                    timestamp: at(30, i),
                    traits: { n: i },
                  },
                  ...Array.from({ length: size - 1 }, (_, k) => ({
                    type: 'track',
                    event: 'Clicked',
                    event_id: `bc-${i}-${k}`,
                    session_id: `bs${i}`,
                    user_id: `w${i}`,
                    timestamp: at(31, i),
                  })),
                ],
                size,
              ),
              Date.now(),
            )
            .then(() => held.push(ingestor.identitiesHeld(scope.projectId) ?? -1)),
        ),
      );
      return held;
    };
    await pair({ identities: 4 }, async ({ bounded, reference, small, big }) => {
      const held = await burst(bounded);
      const unbounded = await burst(reference);
      // At an answer, the next group's person may be held beside the bound's.
      expect(Math.max(...held)).toBeLessThanOrEqual(6);
      expect(Math.max(...unbounded)).toBe(2 * PEOPLE);
      expect(await state(small, IDENTITY)).toEqual(await state(big, IDENTITY));
      const counts = (db: Database) =>
        db.read.all(`SELECT event, count(*)::INTEGER AS n FROM events GROUP BY event ORDER BY event`);
      expect(await counts(small)).toEqual(await counts(big));
      expect(await counts(small)).toContainEqual({ event: 'Clicked', n: PEOPLE * (size - 1) });
    });
  });
});
