import type { IdentityChanges } from '../identity/model.js';
import { writeIdentities } from '../identity/store.js';
import { appendColumns, type CellValue } from '../store/append.js';
import type { Queryable } from '../store/database.js';
import { StagedAppend } from '../store/staged-append.js';
import { exec, execWhile, int, ints, rows, text, texts, tsFromMs } from '../store/statements.js';
import { conversationKeySql, keyOf } from './conversation-key.js';
import { hashId } from './known-ids.js';
import type { ProjectCache, Touched } from './project-cache.js';
import type { EventRow } from './rows.js';
import type { ConversationRow, SessionRow } from './state.js';

const json = (value: object | null): string | null => (value === null ? null : JSON.stringify(value));

/** The rows of one request, received at one time. */
export interface RowPart {
  rows: readonly EventRow[];
  receivedAt: number;
}

/** The events rows of a group, columns and data chunks made when `prepare()` or `append()` asks. */
function stageEvents(writes: readonly ProjectWrite[]): StagedAppend {
  return new StagedAppend('events', () => eventColumns(writes));
}

function eventColumns(writes: readonly ProjectWrite[]): CellValue[][] {
  // One pass over the rows filling every column: a `map` per column took twice as long (a profile
  // of a 100k-turn import: 0.8 s against 0.3 s of the service's thread, the properties' JSON included).
  const projects: string[] = [];
  const ids: string[] = [];
  const names: string[] = [];
  const types: string[] = [];
  const times: number[] = [];
  const users: Array<string | null> = [];
  const sessions: Array<string | null> = [];
  const conversations: Array<string | null> = [];
  const props: Array<string | null> = [];
  const origins: Array<string | null> = [];
  const received: number[] = [];
  const devices: Array<string | null> = [];
  const hashes: Array<number | null> = [];
  for (const { cache, parts } of writes) {
    for (const part of parts) {
      for (const r of part.rows) {
        projects.push(cache.projectId);
        ids.push(r.eventId);
        names.push(r.event);
        types.push(r.type);
        times.push(r.ts);
        users.push(r.userId);
        sessions.push(r.sessionId);
        conversations.push(r.conversationId);
        props.push(json(r.properties));
        origins.push(r.originEventId);
        received.push(part.receivedAt);
        devices.push(r.deviceId ?? null);
        hashes.push(r.originEventId === null ? hashId(r.eventId) : null);
      }
    }
  }
  return [
    projects,
    ids,
    names,
    types,
    times,
    users,
    sessions,
    conversations,
    props,
    origins,
    received,
    devices,
    hashes,
  ];
}

/** One mutable column: how to read it from a row snapshot, and how SQL converts the list value. */
interface Column<R> {
  column: string;
  of: (row: R) => string | number | null;
  as?: 'timestamp' | 'json';
}

const SESSION_COLUMNS: ReadonlyArray<Column<SessionRow>> = [
  { column: 'user_id', of: (r) => r.userId },
  { column: 'device_id', of: (r) => r.deviceId },
  { column: 'started_at', of: (r) => r.startedAt, as: 'timestamp' },
  { column: 'ended_at', of: (r) => r.endedAt, as: 'timestamp' },
  { column: 'last_event_at', of: (r) => r.lastEventAt, as: 'timestamp' },
  { column: 'attributes', of: (r) => r.attributes, as: 'json' },
  { column: 'provisional_end', of: (r) => r.provisionalEnd },
];

const CONVERSATION_COLUMNS: ReadonlyArray<Column<ConversationRow>> = [
  { column: 'started_at', of: (r) => r.startedAt, as: 'timestamp' },
  { column: 'ended_at', of: (r) => r.endedAt, as: 'timestamp' },
  { column: 'properties', of: (r) => r.properties, as: 'json' },
];

/** A stored row to update: its project and key, with the values stored and those to write. */
interface Changed<R> {
  project: string;
  id: string;
  /** A plain column the key is built of (conversations: their session), matched first. */
  within?: string;
  stored: R;
  next: R;
}

/**
 * Stored rows whose columns changed get one UPDATE for the group, all its projects together, setting
 * only the columns that changed in some row: every column set costs DuckDB an update segment
 * (measured 1 column 3.9 ms, 5 columns 6.9 ms for 210 rows), and a turn changes only its session's
 * last_event_at. An UPDATE is ~1.5 ms however few its rows, so one per project of a group of many
 * small projects' requests was most of their write (by hand: 40 projects sending 3 events a request,
 * 36 ms of a group's 50 ms).
 *
 * DuckDB updates by scanning; bounding the scan by the stored started_at range lets zone maps skip
 * every row group outside it, which for live traffic is all but the newest. Rows are picked by a
 * join with the unnested lists (a hash table). A key that is an expression (conversations:
 * conversation-key.ts) is matched behind a plain column it is built of (`within`), so the expression
 * is computed only for rows of the named sessions.
 */
async function updateChanged<R extends { startedAt: number }>(
  q: Queryable,
  meanwhile: () => void,
  table: 'sessions' | 'conversations',
  key: string,
  rows: ReadonlyArray<Changed<R>>,
  columns: ReadonlyArray<Column<R>>,
  withinColumn?: string,
): Promise<void> {
  const differs = (c: Column<R>, r: { stored: R; next: R }) => c.of(r.stored) !== c.of(r.next);
  const dirty = rows.filter((r) => columns.some((c) => differs(c, r)));
  if (dirty.length === 0) return;
  const changed = columns.filter((c) => dirty.some((r) => differs(c, r)));
  const assignments = changed.map(({ column, as }, i) => {
    const value = `n.v${i}`;
    return `${column} = ${as === 'timestamp' ? tsFromMs(value) : as === 'json' ? `${value}::JSON` : value}`;
  });
  const lists = changed.map((_, i) => `unnest($${i + 5}) AS v${i}`);
  const within = withinColumn === undefined ? '' : `AND t.${withinColumn} = n.w`;
  if (withinColumn !== undefined) lists.push(`unnest($${changed.length + 5}) AS w`);
  const starts = dirty.map((r) => r.stored.startedAt);
  await execWhile(
    q,
    `UPDATE ${table} t SET ${assignments.join(', ')}
      FROM (SELECT unnest($1) AS p, unnest($2) AS k, ${lists.join(', ')}) n
      WHERE t.project_id = n.p ${within} AND ${key} = n.k
        AND t.started_at BETWEEN make_timestamptz($3 * 1000) AND make_timestamptz($4 * 1000)`,
    [
      texts(dirty.map((r) => r.project)),
      texts(dirty.map((r) => r.id)),
      int(Math.min(...starts)),
      int(Math.max(...starts)),
      ...changed.map((c) => {
        const values = dirty.map((r) => c.of(r.next));
        // Timestamps travel as epoch-ms integers; every other column is text (JSON as its text).
        return c.as === 'timestamp'
          ? ints(values as Array<number | null>)
          : texts(values as Array<string | null>);
      }),
      ...(withinColumn === undefined ? [] : [texts(dirty.map((r) => r.within ?? null))]),
    ],
    meanwhile,
  );
}

async function writeSessions(q: Queryable, meanwhile: () => void, writes: readonly ProjectWrite[]) {
  const rows = writes.flatMap(({ cache, touched }) =>
    [...touched.sessions].flatMap((id) => {
      const s = cache.sessions.get(id);
      if (s === undefined) return [];
      const next: SessionRow = {
        userId: cache.identity.canonical(s.userId),
        deviceId: s.deviceId,
        startedAt: s.startedAt,
        endedAt: s.endedAt,
        lastEventAt: s.lastEventAt,
        attributes: json(s.attributes),
        provisionalEnd: s.provisionalEnd,
      };
      s.writing = next;
      return [{ s, project: cache.projectId, id: s.id, stored: s.stored, next }];
    }),
  );
  const fresh = rows.filter((r) => r.stored === null);
  await appendColumns(q, 'sessions', [
    fresh.map((r) => r.project),
    fresh.map((r) => r.id),
    fresh.map((r) => r.next.userId),
    fresh.map((r) => r.next.deviceId),
    fresh.map((r) => r.next.startedAt),
    fresh.map((r) => r.next.endedAt),
    fresh.map((r) => r.next.lastEventAt),
    fresh.map((r) => r.next.attributes),
    fresh.map((r) => r.next.provisionalEnd),
    fresh.map((r) => r.s.derivedKey),
  ]);
  const stored = rows.flatMap(({ project, id, stored, next }) =>
    stored ? [{ project, id, stored, next }] : [],
  );
  await updateChanged(q, meanwhile, 'sessions', 't.session_id', stored, SESSION_COLUMNS);
}

async function writeConversations(q: Queryable, meanwhile: () => void, writes: readonly ProjectWrite[]) {
  const rows = writes.flatMap(({ cache, touched }) =>
    [...touched.conversations].flatMap((key) => {
      const c = cache.conversations.get(key);
      if (c === undefined) return [];
      const next: ConversationRow = {
        startedAt: c.startedAt,
        endedAt: c.endedAt,
        properties: json(c.properties),
      };
      c.writing = next;
      // Stored rows are found by session and id together: conversation ids are scoped to their session.
      return [{ c, project: cache.projectId, id: keyOf(c), within: c.sessionId, stored: c.stored, next }];
    }),
  );
  const fresh = rows.filter((r) => r.stored === null);
  await appendColumns(q, 'conversations', [
    fresh.map((r) => r.project),
    fresh.map((r) => r.c.id),
    fresh.map((r) => r.c.sessionId),
    fresh.map((r) => r.next.startedAt),
    fresh.map((r) => r.next.endedAt),
    fresh.map((r) => r.next.properties),
  ]);
  const stored = rows.flatMap(({ project, id, within, stored, next }) =>
    stored ? [{ project, id, within, stored, next }] : [],
  );
  await updateChanged(
    q,
    meanwhile,
    'conversations',
    conversationKeySql('t'),
    stored,
    CONVERSATION_COLUMNS,
    'session_id',
  );
}

/** A reopened session's stored rows (identity rows aside), deleted before its replay is written. */
export interface Wiped {
  id: string;
  /** The session its identity rows (kept) now belong to: itself, or the one it was merged into. */
  into: string;
  /** The session's time span (epoch ms): bounds the scan of events, as zone maps allow. */
  from: number;
  to: number;
}

/** A stored event as the live feed compares it: its name, time and properties' JSON. */
const eventContent = (event: string, ts: number, properties: string | null): string =>
  `${event}\u0000${ts}\u0000${properties ?? ''}`;

/** Rows as written, by event id, for what a replay deleted: `eventContent` of each. */
export type Restorable = ReadonlyMap<string, string>;

/** Returns the deleted events' content by id: a replay that stores one again unchanged is no news. */
async function deleteSessions(q: Queryable, project: string, wiped: readonly Wiped[]): Promise<Restorable> {
  const deleted = new Map<string, string>();
  if (wiped.length === 0) return deleted;
  const ids = texts(wiped.map((w) => w.id));
  const gone = await rows<{ id: string; event: string; ms: number; properties: string | null }>(
    q,
    `DELETE FROM events WHERE project_id = $1 AND session_id IN (SELECT unnest($2))
       AND type NOT IN ('identify', 'alias')
       AND ts BETWEEN ${tsFromMs('$3')} AND ${tsFromMs('$4')}
     RETURNING event_id AS id, event, epoch_ms(ts)::DOUBLE AS ms, properties::VARCHAR AS properties`,
    [
      text(project),
      ids,
      int(Math.min(...wiped.map((w) => w.from))),
      int(Math.max(...wiped.map((w) => w.to))),
    ],
  );
  for (const r of gone) deleted.set(r.id, eventContent(r.event, r.ms, r.properties));
  const moved = wiped.filter((w) => w.into !== w.id);
  if (moved.length > 0)
    await exec(
      q,
      `UPDATE events SET session_id = $3[list_position($2, session_id)]
        WHERE project_id = $1 AND session_id IN (SELECT unnest($2))`,
      [text(project), texts(moved.map((w) => w.id)), texts(moved.map((w) => w.into))],
    );
  for (const table of ['conversations', 'sessions'])
    await exec(q, `DELETE FROM ${table} WHERE project_id = $1 AND session_id IN (SELECT unnest($2))`, [
      text(project),
      ids,
    ]);
  return deleted;
}

/** A row a replay stores again as it was (same name, time and properties): already sent live. */
export function restoredUnchanged(row: EventRow, deleted: Restorable): boolean {
  const before = deleted.get(row.eventId);
  return before !== undefined && before === eventContent(row.event, row.ts, json(row.properties));
}

/** One project's part of a group: its cache, identity changes, rows, touched and reopened sessions. */
export interface ProjectWrite {
  cache: ProjectCache;
  ch: IdentityChanges;
  parts: readonly RowPart[];
  touched: Touched;
  wiped: readonly Wiped[];
}

/**
 * Everything a planned group of requests changes, inside the caller's transaction: reopened sessions
 * deleted first, then identity, sessions, conversations and events of all the group's projects, each
 * table with one append and at most one UPDATE. Returns what each project's replays
 * deleted, in the order of `writes`.
 */
export async function writeGroup(
  q: Queryable,
  writes: readonly ProjectWrite[],
  /** Synchronous work to overlap with DuckDB's execution of the UPDATEs. */
  meanwhile: () => void = () => undefined,
): Promise<Restorable[]> {
  const deleted: Restorable[] = [];
  for (const w of writes) deleted.push(await deleteSessions(q, w.cache.projectId, w.wiped));
  // The events are appended last: their columns and data chunks are made while DuckDB runs the
  // first UPDATE of users, sessions or conversations (each ~10 ms of an import's transaction, the
  // service's thread otherwise idle), or just before the append when no UPDATE runs.
  const events = stageEvents(writes);
  const ahead = () => {
    events.prepare();
    meanwhile();
  };
  await writeIdentities(
    q,
    writes.map((w) => ({ project: w.cache.projectId, maps: w.cache.identity, ch: w.ch })),
    ahead,
  );
  await writeSessions(q, ahead, writes);
  await writeConversations(q, ahead, writes);
  await events.append(q);
  return deleted;
}
