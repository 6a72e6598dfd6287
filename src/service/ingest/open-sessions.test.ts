import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQueueBody } from '../../shared/events.js';
import { LexicalAnalyser } from '../analysis/lexical-analyser.js';
import { type Database, openDatabase } from '../store/database.js';
import { CACHED_PROJECTS, Ingestor } from './ingestor.js';

/**
 * Sessions never ended stayed in their project's cache for the service's life, with every user text
 * of their open conversations (found by a soak of `cas serve`). The cache now keeps a bounded number;
 * one let go is loaded again when an event names it. The same requests through a cache of 3 open
 * sessions and through an unbounded one must store the same rows.
 */
const scope = { orgId: 'org', projectId: 'p' };
const at = (minute: number, s: number) => new Date(Date.UTC(2025, 4, 2, 9, minute, s)).toISOString();
const SESSIONS = 10;

function events(raw: unknown[]) {
  const r = parseQueueBody(raw);
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

async function state(db: Database): Promise<unknown[][]> {
  return Promise.all(STATE.map((sql) => db.read.all<Record<string, unknown>>(sql)));
}

let bounded: Database;
let unbounded: Database;
beforeAll(async () => {
  bounded = await openDatabase(':memory:');
  unbounded = await openDatabase(':memory:');
});
afterAll(async () => {
  await bounded.close();
  await unbounded.close();
});

describe('open sessions in the ingest cache', () => {
  it('are let go past the bound, and one let go carries on from the database as if it had stayed', async () => {
    const small = new Ingestor(bounded, new LexicalAnalyser(), () => undefined, CACHED_PROJECTS, 3);
    const big = new Ingestor(unbounded, new LexicalAnalyser());
    try {
      const { heldAfterOpening } = await run(small);
      const reference = await run(big);
      expect(Math.max(...heldAfterOpening)).toBeLessThanOrEqual(3);
      expect(reference.heldAfterOpening.at(-1)).toBe(SESSIONS);
      // Everything ended: nothing open is held either way.
      expect(small.openSessionsHeld(scope.projectId)).toBe(0);

      const [sessions, conversations, stored] = await state(bounded);
      expect([sessions, conversations, stored]).toEqual(await state(unbounded));
      expect(sessions).toHaveLength(SESSIONS);
      // A conversation let go before its last turn counts the turns before it (they were replayed).
      const summaries = (stored as Array<{ event: string; properties: string }>)
        .filter((e) => e.event === 'Conversation Summary')
        .map((e) => JSON.parse(e.properties) as { turns: number });
      expect(summaries.map((p) => p.turns)).toEqual(Array(SESSIONS).fill(3));
    } finally {
      small.close();
      big.close();
    }
  });
});
