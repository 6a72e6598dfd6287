import type { WireEvent, WireEventOf } from '../../shared/event-bodies.js';
import { eventRank } from '../../shared/event-order.js';
import { EVENT_ROUTES, parseWireEventRaw } from '../../shared/events.js';
import type { Queryable } from '../store/database.js';
import { rowsByKeys, text, texts } from '../store/statements.js';
import type { ProjectCache } from './project-cache.js';

/** A caller-sent row of a stored session, as replayed when the session reopens. */
export type StoredRow = {
  event_id: string;
  event: string;
  type: string;
  ts: number;
  conversation_id: string | null;
  properties: string | null;
  /** The device the event named (null for events stored before migration 6 recorded it). */
  device_id: string | null;
  /** The row's place in the table (DuckDB's rowid): rows are appended in the order they were planned. */
  seq: number;
};

/**
 * Loads the caller-sent rows of sessions that new history will reopen (their ends were added by an
 * import: decisions §4). Generated rows are made again; identity rows stay where they are, but are
 * loaded too: their times and devices are the session's as much as any event's.
 */
export async function loadHistory(q: Queryable, cache: ProjectCache, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await rowsByKeys<StoredRow & { session_id: string }>(q, [...ids], (chunk) => ({
    sql: `SELECT session_id, event_id, event, type, epoch_ms(ts)::DOUBLE AS ts, conversation_id,
            properties::VARCHAR AS properties, device_id, rowid::DOUBLE AS seq FROM events
           WHERE project_id = $1 AND session_id IN (SELECT unnest($2)) AND origin_event_id IS NULL`,
    params: [text(cache.projectId), texts(chunk)],
  }));
  for (const id of ids) cache.history.set(id, []);
  for (const { session_id, ...row } of rows) {
    const s = cache.sessions.get(session_id);
    if (s && row.event_id !== s.provisionalEnd) cache.history.get(session_id)?.push(row);
  }
}

/**
 * A stored row as the wire event that made it (validated again, as any event), in session
 * `sessionId`. With `renumber`, a default conversation of its old session (`<old>/<n>`) loses its
 * name: the merged session numbers its default conversations afresh, as one run would. A stored row
 * cannot tell a default name from a caller's own, so only history (an import's runs, which must end
 * as one run would) and merged sessions renumber: a client's late event keeps every conversation of
 * its session as named (a custom event lost its conversation, and a session holding two open default
 * conversations refused the late event with 400: found by probing).
 */
function wireOf(row: StoredRow, sessionId: string, from: string, renumber: boolean): WireEvent | string {
  const properties = row.properties === null ? undefined : (JSON.parse(row.properties) as unknown);
  const raw: Record<string, unknown> = {
    type: row.type,
    event_id: row.event_id,
    timestamp: new Date(row.ts).toISOString(),
    session_id: sessionId,
  };
  if (row.device_id !== null) raw.device_id = row.device_id;
  if (row.type === 'track') {
    raw.event = row.event;
    const defaulted =
      renumber &&
      row.conversation_id?.startsWith(`${from}/`) &&
      /^\d+$/.test(row.conversation_id.slice(from.length + 1));
    if (row.conversation_id !== null && !defaulted) raw.conversation_id = row.conversation_id;
    if (properties !== undefined) raw.properties = properties;
  } else if (properties !== undefined) raw.attributes = properties;
  if (row.type === 'start_session') {
    // Its schema asks for a user, which a replayed start does not need (the session exists).
    const attributes = (properties ?? undefined) as WireEventOf<'start_session'>['attributes'];
    return {
      kind: 'start_session',
      type: 'start_session',
      session_id: sessionId,
      event_id: row.event_id,
      timestamp: raw.timestamp as string,
      ...(row.device_id === null ? {} : { device_id: row.device_id }),
      ...(attributes === undefined ? {} : { attributes }),
    };
  }
  const parsed = parseWireEventRaw(raw, EVENT_ROUTES.event, Number.MAX_SAFE_INTEGER, false);
  return parsed.ok ? parsed.value : `stored event "${row.event_id}" cannot be replayed`;
}

export interface Replayed {
  event: WireEvent;
  ts: number;
  /** The request's index of a new event; undefined for a stored one. */
  index: number | undefined;
  /** Arrival order: a stored row's seq, then the request's events in their order. */
  arrival: number;
  /**
   * A stored identify or alias of the session: not planned again (its row and its effect on the
   * user stay), but it opens the session where it is the earliest and names its device, as it did
   * when it was planned (a replay that left it out moved the session's start and device: found by probing).
   */
  anchor?: true;
}

const IDENTITY_TYPES: ReadonlySet<string> = new Set(['identify', 'alias']);

/** A stored identity row as the point of the session it stays: its time, id and device. */
function anchorOf(row: StoredRow, sessionId: string): Replayed {
  const event = {
    kind: row.type,
    type: row.type,
    session_id: sessionId,
    event_id: row.event_id,
    timestamp: new Date(row.ts).toISOString(),
    ...(row.device_id === null ? {} : { device_id: row.device_id }),
  } as WireEvent;
  return { event, ts: row.ts, index: undefined, arrival: row.seq, anchor: true };
}

/** An explicit start opens its session whatever its time (the session still starts at its earliest event). */
const sortTime = (r: Replayed): number =>
  r.event.kind === 'start_session' ? Number.NEGATIVE_INFINITY : r.ts;

/**
 * Ties broken by event id in code-unit order, as the import sorts by content hash (its ids are
 * `imp2-` + that hash): localeCompare's collation put `_` before letters, so a run replaying a
 * session opened it with another of two same-instant records than one run over all of them, and its
 * generated rows took other ids (found by probing).
 */
const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const byTimeRankId = (a: Replayed, b: Replayed): number =>
  sortTime(a) - sortTime(b) ||
  a.ts - b.ts ||
  eventRank(a.event) - eventRank(b.event) ||
  byId(a.event.event_id ?? '', b.event.event_id ?? '');

/**
 * A client's events of one instant stay in the order they came, as the planner took them: ranked,
 * a turn sent after a `Conversation Ended` of the same instant went before it, and two conversations
 * became one (found by probing, with events sent without a timestamp).
 */
export const byTimeArrival = (a: Replayed, b: Replayed): number =>
  sortTime(a) - sortTime(b) || a.ts - b.ts || a.arrival - b.arrival;

/**
 * A stored row of a reopened session as a point of its replay, in session `target` (its own was
 * `from`): an identity row as an anchor, any other as the wire event that made it, or why it cannot
 * be replayed. `renumber`: see wireOf.
 */
export function storedPoint(
  row: StoredRow,
  target: string,
  from: string,
  renumber: boolean,
): Replayed | string {
  if (IDENTITY_TYPES.has(row.type)) return anchorOf(row, target);
  const event = wireOf(row, target, from, renumber);
  return typeof event === 'string' ? event : { event, ts: row.ts, index: undefined, arrival: row.seq };
}
