import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQueueBody } from '../../shared/events.js';
import { LexicalAnalyser } from '../analysis/lexical-analyser.js';
import { identifyUser } from '../identity/identity.js';
import { type Database, openDatabase, type Queryable } from '../store/database.js';
import { Ingestor } from './ingestor.js';
import { hashId } from './known-ids.js';

let db: Database;
let ingestor: Ingestor;
beforeAll(async () => {
  db = await openDatabase(':memory:');
  ingestor = new Ingestor(db, new LexicalAnalyser());
});
afterAll(async () => {
  ingestor.close();
  await db.close();
});

const scope = { orgId: 'org', projectId: 'p' };
const at = (s: number) => new Date(Date.UTC(2025, 2, 9, 12, 0, s)).toISOString();

function events(raw: unknown[]) {
  const r = parseQueueBody(raw);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.events;
}

const turn = (session: string, s: number) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: session,
  timestamp: at(s),
  properties: { user: 'hello', assistant: 'hi' },
});

describe('Ingestor pipelining', () => {
  it('updates a stored row found by the start it was written with, though the next group moved it meanwhile', async () => {
    // The first request is a group of its own (the pump takes it before the second is queued); the
    // second is planned while the first commits and moves the session's start back, which the
    // live state shows before the first group's row is even stored.
    const first = ingestor.ingest(
      scope,
      events([{ type: 'start_session', session_id: 's', device_id: 'd', timestamp: at(30) }, turn('s', 31)]),
      Date.now(),
    );
    const second = ingestor.ingest(scope, events([turn('s', 10), turn('s', 40)]), Date.now());
    await expect(Promise.all([first, second])).resolves.toEqual([
      { accepted: 2, duplicates: 0 },
      { accepted: 2, duplicates: 0 },
    ]);
    expect(ingestor.stats.transactions).toBe(2);
    const row = await db.read.one<{ started: number; last: number }>(
      `SELECT epoch(started_at)::INTEGER AS started, epoch(last_event_at)::INTEGER AS last
         FROM sessions WHERE project_id = 'p' AND session_id = 's'`,
    );
    expect(row).toEqual({ started: Date.parse(at(10)) / 1000, last: Date.parse(at(40)) / 1000 });
  });
});

describe('Ingestor groups', () => {
  it('replays a stored session one request of a group reopens, after another request of the group added to it', async () => {
    const opened = { type: 'start_session', session_id: 'r', device_id: 'd', timestamp: at(20) };
    await ingestor.ingest(scope, events([opened, turn('r', 20), turn('r', 25)]), Date.now());
    // The first request is a group of its own; the next two wait together: one adds to session r,
    // the other reaches back before r's start, so r is replayed with it.
    const other = { type: 'start_session', session_id: 'x', device_id: 'd', timestamp: at(1) };
    const first = ingestor.ingest(scope, events([other]), Date.now());
    const adds = ingestor.ingest(scope, events([turn('r', 30)]), Date.now());
    const reopens = ingestor.ingest(scope, events([turn('r', 5)]), Date.now());
    await expect(Promise.all([first, adds, reopens])).resolves.toEqual([
      { accepted: 1, duplicates: 0 },
      { accepted: 1, duplicates: 0 },
      { accepted: 1, duplicates: 0 },
    ]);
    const turns = await db.read.all<{ s: number }>(
      `SELECT epoch(ts)::INTEGER AS s FROM events
        WHERE project_id = 'p' AND session_id = 'r' AND event = 'Conversation Turn' ORDER BY ts`,
    );
    expect(turns.map((t) => t.s)).toEqual([5, 20, 25, 30].map((s) => Date.parse(at(s)) / 1000));
    const row = await db.read.one<{ started: number; last: number }>(
      `SELECT epoch(started_at)::INTEGER AS started, epoch(last_event_at)::INTEGER AS last
         FROM sessions WHERE project_id = 'p' AND session_id = 'r'`,
    );
    expect(row).toEqual({ started: Date.parse(at(5)) / 1000, last: Date.parse(at(30)) / 1000 });
  });
});

describe('Ingestor project caches', () => {
  it('holds at most its bound of project caches; a project let go carries on from the database', async () => {
    const bounded = new Ingestor(db, new LexicalAnalyser(), () => undefined, 2);
    try {
      const scopeOf = (projectId: string) => ({ orgId: 'org', projectId });
      const open = { type: 'start_session', session_id: 'lru', device_id: 'd', timestamp: at(1) };
      const known = { ...turn('lru', 2), event_id: 'lru-t2' };
      await bounded.ingest(scopeOf('lru-1'), events([open, known]), Date.now());
      await bounded.ingest(scopeOf('lru-2'), events([open]), Date.now());
      expect(bounded.cachedProjects).toEqual(['lru-1', 'lru-2']);
      await bounded.ingest(scopeOf('lru-3'), events([open]), Date.now());
      expect(bounded.cachedProjects).toEqual(['lru-2', 'lru-3']);
      // lru-1 again, its cache loaded anew: the re-sent turn is a duplicate, the next joins its session.
      await expect(
        bounded.ingest(scopeOf('lru-1'), events([known, turn('lru', 3)]), Date.now()),
      ).resolves.toEqual({ accepted: 1, duplicates: 1 });
      expect(bounded.cachedProjects).toEqual(['lru-3', 'lru-1']);
      // A use moves a project to the end: lru-3 is let go next, not lru-1.
      await bounded.ingest(scopeOf('lru-1'), events([turn('lru', 4)]), Date.now());
      await bounded.ingest(scopeOf('lru-2'), events([turn('lru', 4)]), Date.now());
      expect(bounded.cachedProjects).toEqual(['lru-1', 'lru-2']);
      const sessions = await db.read.all<{ started: number; last: number; ended: number | null }>(
        `SELECT epoch(started_at)::INTEGER AS started, epoch(last_event_at)::INTEGER AS last,
                epoch(ended_at)::INTEGER AS ended
           FROM sessions WHERE project_id = 'lru-1'`,
      );
      expect(sessions).toEqual([
        { started: Date.parse(at(1)) / 1000, last: Date.parse(at(4)) / 1000, ended: null },
      ]);
      const turns = await db.read.one<{ n: number }>(
        `SELECT count(*)::INTEGER AS n FROM events WHERE project_id = 'lru-1' AND event = 'Conversation Turn'`,
      );
      expect(turns?.n).toBe(3);
    } finally {
      bounded.close();
    }
  });
});

describe('Ingestor groups across projects', () => {
  // A group held one project's requests: traffic spread over many projects committed one request per
  // transaction (found by probing: ~100 requests/s over 40 projects against ~300 on one).
  it('commits waiting requests of several projects together, each stored and answered as alone', async () => {
    const grouped = new Ingestor(db, new LexicalAnalyser());
    try {
      const scopeOf = (n: number) => ({ orgId: 'org', projectId: `many-${n}` });
      const start = (n: number) => ({
        type: 'start_session',
        session_id: 'shared-name',
        device_id: `d${n}`,
        timestamp: at(1),
      });
      // Two requests per project, the second continuing the first's session: order kept per project.
      const first = Array.from({ length: 6 }, (_, n) =>
        grouped.ingest(scopeOf(n), events([start(n), turn('shared-name', 2)]), Date.now()),
      );
      const second = Array.from({ length: 6 }, (_, n) =>
        grouped.ingest(
          scopeOf(n),
          events([turn('shared-name', 3), { ...turn('shared-name', 4), event_id: `x${n}` }]),
          Date.now(),
        ),
      );
      expect(await Promise.all([...first, ...second])).toEqual(
        Array.from({ length: 12 }, () => ({ accepted: 2, duplicates: 0 })),
      );
      // The first request is taken alone (the pump starts at once); the other eleven wait together.
      expect(grouped.stats.transactions).toBeLessThanOrEqual(3);
      // A refused request (a second start of its session) sinks nothing of the other projects: they are
      // still written together (with the first of these, or after it, taken alone), not one by one.
      const before = grouped.stats.transactions;
      const alone = grouped.ingest(scopeOf(5), events([turn('shared-name', 6)]), Date.now());
      const more = [0, 1].map((n) =>
        grouped.ingest(scopeOf(n), events([{ ...turn('shared-name', 5), event_id: `y${n}` }]), Date.now()),
      );
      const refused = grouped.ingest(scopeOf(2), events([start(2)]), Date.now());
      await expect(Promise.all([alone, ...more])).resolves.toEqual(
        [5, 0, 1].map(() => ({ accepted: 1, duplicates: 0 })),
      );
      await expect(refused).rejects.toMatchObject({ status: 409 });
      expect(grouped.stats.transactions - before).toBeLessThanOrEqual(2);
      const rows = await db.read.all<{ project: string; turns: number; sessions: number }>(
        `SELECT e.project_id AS project, count(*) FILTER (event = 'Conversation Turn')::INTEGER AS turns,
                (SELECT count(*) FROM sessions s WHERE s.project_id = e.project_id)::INTEGER AS sessions
           FROM events e WHERE e.project_id LIKE 'many-%' GROUP BY ALL ORDER BY 1`,
      );
      expect(rows).toEqual(
        Array.from({ length: 6 }, (_, n) => ({
          project: `many-${n}`,
          turns: n < 2 || n === 5 ? 4 : 3,
          sessions: 1,
        })),
      );
      // A re-sent event of one project is a duplicate there, and news in another one.
      const resent = events([{ ...turn('shared-name', 4), event_id: 'x0' }]);
      await expect(
        Promise.all([
          grouped.ingest(scopeOf(0), resent, Date.now()),
          grouped.ingest(scopeOf(3), resent, Date.now()),
        ]),
      ).resolves.toEqual([
        { accepted: 0, duplicates: 1 },
        { accepted: 1, duplicates: 0 },
      ]);
    } finally {
      grouped.close();
    }
  });

  // A group's projects are written together: one append and one UPDATE per table for all of them
  // (an UPDATE per project was most of a small request's write), so rows of the same ids in several
  // projects must each take their own project's values, and a project the group does not name none.
  it("updates each project's stored rows of the same ids with its own values, as requests alone would", async () => {
    const ids = ['upd-0', 'upd-1', 'upd-2', 'upd-3'];
    const opened = (project: string) =>
      events([
        { type: 'start_session', session_id: 'same', device_id: `${project}-d`, timestamp: at(1) },
        { ...turn('same', 2), conversation_id: 'conv', event_id: `${project}-first` },
      ]);
    // Per project: one request continuing the stored session (turns at different times), one ending it
    // (upd-2), none (upd-3); and a project whose session of the same id is new (upd-new).
    const grouped: Array<[string, ReturnType<typeof events>]> = [
      ['upd-0', events([{ ...turn('same', 10), conversation_id: 'conv', event_id: 'a' }])],
      ['upd-1', events([{ ...turn('same', 20), conversation_id: 'other', event_id: 'b' }])],
      ['upd-2', events([{ type: 'end_session', session_id: 'same', timestamp: at(30) }])],
      ['upd-new', opened('upd-new')],
    ];
    const scopeOf = (projectId: string) => ({ orgId: 'org', projectId });
    const stateOf = (q: Database) =>
      Promise.all(
        ['sessions', 'conversations'].map((table) =>
          // Users' ids are made at random: a session's user is compared by its device.
          q.read.all(
            `SELECT * ${table === 'sessions' ? 'EXCLUDE (user_id)' : ''} FROM ${table}
              WHERE project_id LIKE 'upd-%' ORDER BY ALL`,
          ),
        ),
      );

    const together = new Ingestor(db, new LexicalAnalyser());
    const aloneDb = await openDatabase(':memory:');
    const alone = new Ingestor(aloneDb, new LexicalAnalyser());
    try {
      for (const id of ids) {
        await together.ingest(scopeOf(id), opened(id), Date.now());
        await alone.ingest(scopeOf(id), opened(id), Date.now());
      }
      const before = together.stats.transactions;
      // The first request is taken alone (the pump starts at once); the others wait and go together.
      const answers = await Promise.all([
        together.ingest(scopeOf('busy'), events([{ ...turn('busy', 1), device_id: 'd' }]), Date.now()),
        ...grouped.map(([id, batch]) => together.ingest(scopeOf(id), batch, Date.now())),
      ]);
      expect(together.stats.transactions - before).toBe(2);
      for (const [id, batch] of grouped)
        expect(await alone.ingest(scopeOf(id), batch, Date.now())).toEqual(
          answers[grouped.findIndex((g) => g[0] === id) + 1],
        );

      const [sessions, conversations] = await stateOf(db);
      expect(sessions).toEqual((await stateOf(aloneDb))[0]);
      expect(conversations).toEqual((await stateOf(aloneDb))[1]);
      // The state differs per project (the comparison would not see values swapped between equal ones).
      const last = new Set(sessions!.map((r) => String((r as { last_event_at: unknown }).last_event_at)));
      expect(last.size).toBe(4);
    } finally {
      together.close();
      alone.close();
      await aloneDb.close();
    }
  });
});

describe('Ingestor warm-up', () => {
  const scopeOf = (projectId: string) => ({ orgId: 'org', projectId });
  const open = (session: string) => ({
    type: 'start_session',
    session_id: session,
    device_id: 'd',
    timestamp: at(1),
  });
  const stored = (project: string) =>
    ingestor.ingest(
      scopeOf(project),
      events([
        open('w'),
        { ...turn('w', 2), event_id: `${project}-t2` },
        { ...turn('w', 3), event_id: `${project}-t3` },
      ]),
      Date.now(),
    );

  it("stores each caller event's id hash with its row, and none for the rows it generated", async () => {
    await stored('warm-hash');
    const rows = await db.read.all<{ event_id: string; id_hash: number | null; origin: string | null }>(
      `SELECT event_id, id_hash, origin_event_id AS origin FROM events WHERE project_id = 'warm-hash'`,
    );
    expect(rows.filter((r) => r.origin !== null).length).toBeGreaterThan(0);
    for (const r of rows) expect(r.id_hash).toBe(r.origin === null ? hashId(r.event_id) : null);
  });

  it("loads a project's cache and events' filter before its first request; re-sent events stay duplicates at any time", async () => {
    await stored('warm-1');
    const fresh = new Ingestor(db, new LexicalAnalyser());
    try {
      await fresh.warm('warm-1');
      expect(fresh.cachedProjects).toEqual(['warm-1']);
      expect(fresh.eventFilterLoaded('warm-1')).toBe(true);
      // Re-sent as stored, at other times (outside the span of the stored ones), and without a
      // time: each is found stored.
      const { timestamp: _, ...timeless } = { ...turn('w', 3), event_id: 'warm-1-t3' };
      const again = [{ ...turn('w', 2), event_id: 'warm-1-t2' }];
      await expect(fresh.ingest(scopeOf('warm-1'), events(again), Date.now())).resolves.toEqual({
        accepted: 0,
        duplicates: 1,
      });
      const moved = [
        { ...turn('w', 50), event_id: 'warm-1-t3' },
        { ...turn('w', 51), event_id: 'warm-1-t2' },
      ];
      await expect(fresh.ingest(scopeOf('warm-1'), events(moved), Date.now())).resolves.toEqual({
        accepted: 0,
        duplicates: 2,
      });
      await expect(fresh.ingest(scopeOf('warm-1'), events([timeless]), Date.now())).resolves.toEqual({
        accepted: 0,
        duplicates: 1,
      });
      await expect(
        fresh.ingest(scopeOf('warm-1'), events([{ ...turn('w', 4), event_id: 'warm-1-t4' }]), Date.now()),
      ).resolves.toEqual({ accepted: 1, duplicates: 0 });
    } finally {
      fresh.close();
    }
  });

  it("gives the events' filter up for a request that arrives, and answers it", async () => {
    await stored('warm-2');
    const fresh = new Ingestor(db, new LexicalAnalyser());
    try {
      const warming = fresh.warm('warm-2');
      const answer = fresh.ingest(
        scopeOf('warm-2'),
        events([{ ...turn('w', 2), event_id: 'warm-2-t2' }]),
        Date.now(),
      );
      await warming;
      await expect(answer).resolves.toEqual({ accepted: 0, duplicates: 1 });
      expect(fresh.eventFilterLoaded('warm-2')).toBe(false);
      // While requests are being ingested, a warm-up does nothing.
      const busy = fresh.ingest(
        scopeOf('warm-2'),
        events([{ ...turn('w', 5), event_id: 'warm-2-t5' }]),
        Date.now(),
      );
      await fresh.warm('warm-other');
      await expect(busy).resolves.toEqual({ accepted: 1, duplicates: 0 });
      expect(fresh.cachedProjects).toEqual(['warm-2']);
      // Told to stop (its service closing): the cache is loaded, the filter left deferred.
      await fresh.warm('warm-1', () => true);
      expect(fresh.eventFilterLoaded('warm-1')).toBe(false);
    } finally {
      fresh.close();
    }
  });

  it("keeps a user route's identity change made while it loads the cache (found by review)", async () => {
    const own = await openDatabase(':memory:');
    try {
      // The user route writes and commits between two statements of the warm-up's load, as it may
      // whenever the writer is free: right after the statement that reads the caller ids' filter.
      let armed = false;
      const real = own.readWritten;
      const between: Queryable = {
        ...real,
        async use(fn) {
          let sql = '';
          const out = await real.use((c) =>
            fn(
              new Proxy(c, {
                get(target, key) {
                  const value: unknown = Reflect.get(target, key);
                  if (key === 'runAndReadAll' && typeof value === 'function')
                    return (text: string, ...rest: unknown[]) => {
                      sql = text;
                      return Reflect.apply(value, target, [text, ...rest]);
                    };
                  return typeof value === 'function' ? value.bind(target) : value;
                },
              }),
            ),
          );
          if (armed && /FROM user_ids/.test(sql) && /to_json/.test(sql)) {
            armed = false;
            await own.write((tx) => identifyUser(tx, scope, { id: 'u-new', traits: { a: 1 } }, new Date()));
          }
          return out;
        },
      };
      const opened = (session: string, user: string, s: number) => ({
        type: 'start_session',
        session_id: session,
        user_id: user,
        timestamp: at(s),
      });
      const first = new Ingestor(own, new LexicalAnalyser());
      await first.ingest(scope, events([opened('s0', 'u-old', 1)]), Date.now());
      first.close();
      const fresh = new Ingestor({ ...own, readWritten: between }, new LexicalAnalyser());
      try {
        armed = true;
        await fresh.warm(scope.projectId);
        expect(armed).toBe(false);
        await fresh.ingest(scope, events([opened('s1', 'u-new', 5)]), Date.now());
      } finally {
        fresh.close();
      }
      // One user holds the caller id, and the session is theirs.
      const owners = await own.read.all<{ user_id: string }>(
        `SELECT user_id FROM user_ids WHERE project_id = 'p' AND id = 'u-new'`,
      );
      expect(owners).toHaveLength(1);
      const session = await own.read.one<{ user_id: string }>(
        `SELECT user_id FROM sessions WHERE project_id = 'p' AND session_id = 's1'`,
      );
      expect(session?.user_id).toBe(owners[0]?.user_id);
    } finally {
      await own.close();
    }
  });
});
