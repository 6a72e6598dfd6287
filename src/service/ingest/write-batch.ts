import type { IdentityChanges, IdentityMaps } from '../identity/model.js';
import { writeIdentity } from '../identity/store.js';
import { appendColumns, type CellValue } from '../store/append.js';
import type { Queryable } from '../store/database.js';
import { StagedAppend } from '../store/staged-append.js';
import { exec, execWhile, int, ints, rows, text, texts, tsFromMs } from '../store/statements.js';
import { conversationKeySql, keyOf } from './conversation-key.js';
import { hashId } from './known-ids.js';
import type { ProjectCache, Touched } from './project-cache.js';
import type { EventRow } from './rows.js';
import type { ConversationRow, ConversationState, SessionRow, SessionState } from './state.js';

const json = (value: object | null): string | null => (value === null ? null : JSON.stringify(value));

/** The rows of one request, received at one time. */
export interface RowPart {
  rows: readonly EventRow[];
  receivedAt: number;
}

/** The events rows of a group, columns and data chunks made when `prepare()` or `append()` asks. */
function stageEvents(project: string, parts: readonly RowPart[]): StagedAppend {
  return new StagedAppend('events', () => eventColumns(project, parts));
}

function eventColumns(project: string, parts: readonly RowPart[]): CellValue[][] {
  // One pass over the rows filling every column: a `map` per column took twice as long (a profile
  // of a 100k-turn import: 0.8 s against 0.3 s of the service's thread, the properties' JSON included).
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
  for (const part of parts) {
    for (const r of part.rows) {
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
  const projects = ids.map(() => project);
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

/**
 * Stored rows whose columns changed get one UPDATE for the batch, setting only the columns that
 * changed in some row: every column set costs DuckDB an update segment (measured 1 column 3.9 ms,
 * 5 columns 6.9 ms for 210 rows), and a turn changes only its session's last_event_at.
 *
 * DuckDB updates by scanning; bounding the scan by the stored started_at range lets zone maps skip
 * every row group outside it, which for live traffic is all but the newest. Rows are picked by a
 * semi-join against the unnested id list (a hash table), and each picked row finds its new values by
 * its position in that list. Measured on a 100k-row table with 220 ids (an import keeps that many
 * sessions open, started hours apart, so the range bound skips little): 5.7 ms, against 24 ms for
 * `list_contains`, which compares every scanned row with every id; with 20 ids they are within 0.3 ms.
 * A key that is an expression (conversations: conversation-key.ts) is cheaper behind a semi-join on
 * a plain column it is built of (`within`): measured on 200k conversations with 220 keys, 17-21 ms
 * against 44-87 ms for the expression alone, and 11-37 ms for the bare conversation_id it replaced.
 */
async function updateChanged<R extends { startedAt: number }>(
  q: Queryable,
  meanwhile: () => void,
  project: string,
  table: 'sessions' | 'conversations',
  key: string,
  rows: ReadonlyArray<{ id: string; stored: R; next: R; within?: string }>,
  columns: ReadonlyArray<Column<R>>,
  withinColumn?: string,
): Promise<void> {
  const differs = (c: Column<R>, r: { stored: R; next: R }) => c.of(r.stored) !== c.of(r.next);
  const dirty = rows.filter((r) => columns.some((c) => differs(c, r)));
  if (dirty.length === 0) return;
  const changed = columns.filter((c) => dirty.some((r) => differs(c, r)));
  const assignments = changed.map(({ column, as }, i) => {
    const value = `$${i + 5}[list_position($2, ${key})]`;
    return `${column} = ${as === 'timestamp' ? tsFromMs(value) : as === 'json' ? `${value}::JSON` : value}`;
  });
  const starts = dirty.map((r) => r.stored.startedAt);
  const within =
    withinColumn === undefined ? '' : `AND ${withinColumn} IN (SELECT unnest($${changed.length + 5}))`;
  await execWhile(
    q,
    `UPDATE ${table} SET ${assignments.join(', ')}
      WHERE project_id = $1 ${within} AND ${key} IN (SELECT unnest($2))
        AND started_at BETWEEN make_timestamptz($3 * 1000) AND make_timestamptz($4 * 1000)`,
    [
      text(project),
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

async function writeSessions(
  q: Queryable,
  meanwhile: () => void,
  project: string,
  maps: IdentityMaps,
  sessions: SessionState[],
) {
  const rows = sessions.map((s) => {
    const next: SessionRow = {
      userId: maps.canonical(s.userId),
      deviceId: s.deviceId,
      startedAt: s.startedAt,
      endedAt: s.endedAt,
      lastEventAt: s.lastEventAt,
      attributes: json(s.attributes),
      provisionalEnd: s.provisionalEnd,
    };
    s.writing = next;
    return { s, id: s.id, stored: s.stored, next };
  });
  const fresh = rows.filter((r) => r.stored === null);
  await appendColumns(q, 'sessions', [
    fresh.map(() => project),
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
  const stored = rows.flatMap(({ id, stored, next }) => (stored ? [{ id, stored, next }] : []));
  await updateChanged(q, meanwhile, project, 'sessions', 'session_id', stored, SESSION_COLUMNS);
}

async function writeConversations(
  q: Queryable,
  meanwhile: () => void,
  project: string,
  conversations: ConversationState[],
) {
  const rows = conversations.map((c) => {
    const next: ConversationRow = {
      startedAt: c.startedAt,
      endedAt: c.endedAt,
      properties: json(c.properties),
    };
    c.writing = next;
    // Stored rows are found by session and id together: conversation ids are scoped to their session.
    return { c, id: keyOf(c), within: c.sessionId, stored: c.stored, next };
  });
  const fresh = rows.filter((r) => r.stored === null);
  await appendColumns(q, 'conversations', [
    fresh.map(() => project),
    fresh.map((r) => r.c.id),
    fresh.map((r) => r.c.sessionId),
    fresh.map((r) => r.next.startedAt),
    fresh.map((r) => r.next.endedAt),
    fresh.map((r) => r.next.properties),
  ]);
  const stored = rows.flatMap(({ id, within, stored, next }) =>
    stored ? [{ id, within, stored, next }] : [],
  );
  await updateChanged(
    q,
    meanwhile,
    project,
    'conversations',
    conversationKeySql(),
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

/**
 * Everything a planned group of requests changes, inside the caller's transaction: reopened sessions
 * deleted first, then identity, events, sessions, conversations, each with one append and at most one
 * UPDATE for the whole group.
 */
export async function writeGroup(
  q: Queryable,
  cache: ProjectCache,
  ch: IdentityChanges,
  parts: readonly RowPart[],
  touched: Touched,
  /** Synchronous work to overlap with DuckDB's execution of the UPDATEs. */
  meanwhile: () => void = () => undefined,
  wiped: readonly Wiped[] = [],
): Promise<Restorable> {
  const project = cache.projectId;
  const deleted = await deleteSessions(q, project, wiped);
  // The events are appended last: their columns and data chunks are made while DuckDB runs the
  // first UPDATE of users, sessions or conversations (each ~10 ms of an import's transaction, the
  // service's thread otherwise idle), or just before the append when no UPDATE runs.
  const events = stageEvents(project, parts);
  const ahead = () => {
    events.prepare();
    meanwhile();
  };
  await writeIdentity(q, project, cache.identity, ch, ahead);
  const sessions = [...touched.sessions].flatMap((id) => cache.sessions.get(id) ?? []);
  await writeSessions(q, ahead, project, cache.identity, sessions);
  const conversations = [...touched.conversations].flatMap((id) => cache.conversations.get(id) ?? []);
  await writeConversations(q, ahead, project, conversations);
  await events.append(q);
  return deleted;
}
