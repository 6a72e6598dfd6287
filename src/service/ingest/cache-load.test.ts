import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../store/database.js';
import { doubles, exec, text, texts } from '../store/statements.js';
import { eventFilter, loadProjectCache, warmEventFilter } from './cache-load.js';
import { EventIdFilter, hashId } from './known-ids.js';

let db: Database;
/** More rows than one statement of a filter's load reads (65,536), so the load crosses ranges. */
const MANY = 70_000;
/** Ids the JSON a range is read as must carry exactly: quotes, escapes, controls, beyond the BMP. */
const ODD = ['a"b', 'back\\slash', 'new\nline', 'tab\there', '\u0001ctl', 'é€😀', '</script>', ' '];

beforeAll(async () => {
  db = await openDatabase(':memory:');
  await db.write(async (tx) => {
    const insert = (project: string, ids: string) =>
      `INSERT INTO events (project_id, event_id, event, type, ts, received_at)
         SELECT '${project}', ${ids}, 'e', 'track', now(), now()`;
    await exec(tx, `${insert('p', "'ev-' || i")} FROM range(${MANY}) t(i)`, []);
    // Another project's rows between and after p's: never in p's filter.
    await exec(tx, `${insert('q', "'other-' || i")} FROM range(10) t(i)`, []);
    await exec(tx, `${insert('p', 'unnest($1)')}`, [texts(ODD)]);
    // A generated row: no caller may send its id, so the filter need not hold it.
    await exec(
      tx,
      `INSERT INTO events (project_id, event_id, event, type, ts, received_at, origin_event_id)
         VALUES ('p', 'ev-1#session-started', 'Session Started', 'start_session', now(), now(), 'ev-1')`,
      [],
    );
    // Project h: rows stored with their id's hash (migration 12), ranges of them across 65,536
    // rowids, and rows stored before it (no hash), read as text.
    const hashed = [...Array(MANY).keys()].map((i) => `h-${i}`);
    await exec(
      tx,
      `INSERT INTO events (project_id, event_id, event, type, ts, received_at, id_hash)
         SELECT 'h', unnest($1), 'e', 'track', now(), now(), unnest($2)`,
      [texts(hashed), doubles(hashed.map(hashId))],
    );
    await exec(tx, `${insert('h', "'h-old-' || i")} FROM range(5) t(i)`, []);
    await exec(
      tx,
      `INSERT INTO sessions (project_id, session_id, user_id, started_at, last_event_at)
         SELECT $1, 's-' || i, 'u', now(), now() FROM range(3) t(i)`,
      [text('p')],
    );
  });
});
afterAll(async () => {
  await db.close();
});

describe('a project cache over a stored project', () => {
  it("defers the events' filter for LOAD_AFTER requests, then loads every id the project's callers stored", async () => {
    const cache = await loadProjectCache(db.readWritten, 'p');
    expect([...Array(3).keys()].every((i) => cache.known.sessions.has(`s-${i}`))).toBe(true);
    cache.known.events.add('planned-meanwhile');
    for (let i = 0; i < EventIdFilter.LOAD_AFTER; i++) {
      expect(await eventFilter(db.readWritten, cache)).toBeNull();
    }
    expect(cache.known.events.loaded).toBe(false);
    const filter = await eventFilter(db.readWritten, cache);
    expect(cache.known.events.loaded).toBe(true);
    expect(filter?.size).toBe(MANY + ODD.length + 1);
    const missing = [...Array(MANY).keys()].filter((i) => !filter?.has(`ev-${i}`));
    expect(missing).toEqual([]);
    expect(ODD.filter((id) => !filter?.has(id))).toEqual([]);
    expect(filter?.has('planned-meanwhile')).toBe(true);
    expect(filter?.has('ev-1#session-started')).toBe(false);
    expect([...Array(10).keys()].some((i) => filter?.has(`other-${i}`))).toBe(false);
    // Loaded once: later requests use it as it is.
    expect(await eventFilter(db.readWritten, cache)).toBe(filter);
  });

  it("loads the events' filter from the stored hashes, and rows stored without one by their text", async () => {
    const cache = await loadProjectCache(db.readWritten, 'h');
    await warmEventFilter(db.readWritten, cache, () => false);
    expect(cache.known.events.loaded).toBe(true);
    const filter = await eventFilter(db.readWritten, cache);
    expect(filter?.size).toBe(MANY + 5);
    expect([...Array(MANY).keys()].filter((i) => !filter?.has(`h-${i}`))).toEqual([]);
    expect([...Array(5).keys()].every((i) => filter?.has(`h-old-${i}`))).toBe(true);
    expect(filter?.has('ev-1')).toBe(false);
  });

  it('gives a warm load up between ranges once asked to, and leaves the filter deferred', async () => {
    const cache = await loadProjectCache(db.readWritten, 'h');
    let asked = 0;
    // Stop before the second range: the first (65,536 rowids) was read.
    await warmEventFilter(db.readWritten, cache, () => ++asked > 1);
    expect(asked).toBe(2);
    expect(cache.known.events.loaded).toBe(false);
    for (let i = 0; i < EventIdFilter.LOAD_AFTER; i++) {
      expect(await eventFilter(db.readWritten, cache)).toBeNull();
    }
    const filter = await eventFilter(db.readWritten, cache);
    expect(filter?.size).toBe(MANY + 5);
  });
});
