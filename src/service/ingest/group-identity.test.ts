import { describe, expect, it } from 'vitest';
import { parseQueueBody } from '../../shared/events.js';
import { LexicalAnalyser } from '../analysis/lexical-analyser.js';
import { type Database, openDatabase } from '../store/database.js';
import { Ingestor } from './ingestor.js';

/**
 * A group's identity changes are written for all its projects at once: one append and one UPDATE
 * per table, its rows matched by project and key. Caller ids (anonymous ones derive from the
 * device) and devices are named alike in every project here, so an id or device row matched by key
 * alone takes another project's value; users' own ids are made at random, so for them it is each
 * project's values and columns that are compared.
 */
const at = (s: number) => new Date(Date.UTC(2025, 5, 1, 8, 0, s)).toISOString();

function events(raw: unknown[]) {
  const r = parseQueueBody(raw);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.events;
}

const stored = events([
  { type: 'identify', id: 'u', device_id: 'dev-a', traits: { plan: 'free' }, timestamp: at(10) },
  { type: 'identify', id: 'v', device_id: 'dev-c', timestamp: at(10) },
  { type: 'start_session', session_id: 'sb', device_id: 'dev-b', timestamp: at(10) },
]);

// Each project changes its stored rows its own way; idw-new stores them for the first time.
const grouped: Array<[string, ReturnType<typeof events>]> = [
  [
    'idw-0',
    events([
      { type: 'identify', id: 'u', traits: { plan: 'pro' }, timestamp: at(20) },
      // The anonymous user's created_at and id use move back.
      { type: 'start_session', session_id: 'early', device_id: 'dev-b', timestamp: at(5) },
    ]),
  ],
  ['idw-1', events([{ type: 'identify', id: 'u', device_id: 'dev-b', timestamp: at(20) }])],
  [
    'idw-2',
    events([
      { type: 'identify', id: 'v', device_id: 'dev-a', timestamp: at(20) },
      { type: 'alias', id: 'v2', previous_id: 'v', timestamp: at(21) },
    ]),
  ],
  ['idw-3', events([{ type: 'identify', id: 'u', traits: { seats: 3 }, timestamp: at(1) }])],
  ['idw-new', stored],
];

/** Identity rows with users named by their primary id (service user ids are made at random). */
function stateOf(q: Database) {
  const names = `SELECT u.project_id, u.user_id, u.primary_id AS who, c.primary_id AS person
                   FROM users u JOIN users c ON c.project_id = u.project_id AND c.user_id = u.canonical_user_id
                  WHERE u.project_id LIKE 'idw-%'`;
  return Promise.all([
    q.read.all(
      `SELECT u.* EXCLUDE (user_id, canonical_user_id), n.who, n.person
         FROM users u JOIN (${names}) n USING (project_id, user_id) ORDER BY ALL`,
    ),
    q.read.all(
      `SELECT i.* EXCLUDE (user_id, seq), n.who,
              row_number() OVER (PARTITION BY i.project_id, i.user_id ORDER BY i.seq) AS rank
         FROM user_ids i JOIN (${names}) n USING (project_id, user_id) ORDER BY ALL`,
    ),
    q.read.all(
      `SELECT d.* EXCLUDE (user_id), n.who, n.person
         FROM devices d JOIN (${names}) n USING (project_id, user_id) ORDER BY ALL`,
    ),
  ]);
}

describe('a group of several projects', () => {
  it("updates each project's stored identity rows of the same ids with its own values, as requests alone would", async () => {
    const scopeOf = (projectId: string) => ({ orgId: 'org', projectId });
    const togetherDb = await openDatabase(':memory:');
    const aloneDb = await openDatabase(':memory:');
    const together = new Ingestor(togetherDb, new LexicalAnalyser());
    const alone = new Ingestor(aloneDb, new LexicalAnalyser());
    try {
      for (const id of ['idw-0', 'idw-1', 'idw-2', 'idw-3']) {
        await together.ingest(scopeOf(id), stored, Date.now());
        await alone.ingest(scopeOf(id), stored, Date.now());
      }
      const before = together.stats.transactions;
      // The first request is taken alone (the pump starts at once); the others wait and go together.
      const answers = await Promise.all([
        together.ingest(
          scopeOf('busy'),
          events([{ type: 'identify', id: 'x', timestamp: at(1) }]),
          Date.now(),
        ),
        ...grouped.map(([id, batch]) => together.ingest(scopeOf(id), batch, Date.now())),
      ]);
      expect(together.stats.transactions - before).toBe(2);
      for (const [i, [id, batch]] of grouped.entries())
        expect(await alone.ingest(scopeOf(id), batch, Date.now())).toEqual(answers[i + 1]);

      const [users, ids, devices] = await stateOf(togetherDb);
      const [usersAlone, idsAlone, devicesAlone] = await stateOf(aloneDb);
      expect(users).toEqual(usersAlone);
      expect(ids).toEqual(idsAlone);
      expect(devices).toEqual(devicesAlone);

      // Each kind of change took place, in its own project only.
      const anon = expect.stringMatching(/^anon_/);
      const owner = (project: string, device: string) =>
        devices!.find((d) => d.project_id === project && d.device_id === device)?.person;
      expect(['idw-0', 'idw-1', 'idw-2', 'idw-3'].map((p) => owner(p, 'dev-a'))).toEqual([
        'u',
        'u',
        'v2',
        'u',
      ]);
      expect(['idw-0', 'idw-1', 'idw-2', 'idw-3'].map((p) => owner(p, 'dev-b'))).toEqual([
        anon,
        'u',
        anon,
        anon,
      ]);
      const user = (project: string, who: string) =>
        users!.find((u) => u.project_id === project && u.who === who);
      expect(
        ['idw-0', 'idw-1', 'idw-2', 'idw-3'].map((p) => JSON.parse(String(user(p, 'u')?.traits))),
      ).toEqual([{ plan: 'pro' }, { plan: 'free' }, { plan: 'free' }, { plan: 'free', seats: 3 }]);
      const anonymous = users!.filter((u) => u.anonymous === true);
      expect(
        anonymous.map((u) => [u.project_id, u.person, new Date(String(u.created_at)).getUTCSeconds()]),
      ).toEqual([
        ['idw-0', anon, 5],
        ['idw-1', 'u', 10],
        ['idw-2', anon, 10],
        ['idw-3', anon, 10],
        ['idw-new', anon, 10],
      ]);
      expect(
        users!.filter((u) => u.who === 'u').map((u) => new Date(String(u.created_at)).getUTCSeconds()),
      ).toEqual([10, 10, 10, 1, 10]);
      expect(users!.filter((u) => u.primary_id === 'v2').map((u) => u.project_id)).toEqual(['idw-2']);
    } finally {
      together.close();
      alone.close();
      await togetherDb.close();
      await aloneDb.close();
    }
  });
});
