import { derivedSessionId } from '../../shared/derived-session.js';
import type { WireEvent, WireEventOf } from '../../shared/event-bodies.js';
import { eventRank } from '../../shared/event-order.js';
import { EVENT_ROUTES, parseWireEventRaw } from '../../shared/events.js';
import type { Queryable } from '../store/database.js';
import { rowsByKeys, text, texts } from '../store/statements.js';
import { planConversationEvent } from './plan-conversation.js';
import { claimForUser, openSession, planSessionEvent } from './plan-session.js';
import type { EventCtx, Planner } from './planner.js';
import type { ProjectCache } from './project-cache.js';
import { isProvisionalEnd, type Replay } from './reopen-plan.js';
import { newEventId } from './rows.js';
import { mergeProps } from './state.js';

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
 * import: decisions §4). Identity rows stay where they are; generated rows are made again.
 */
export async function loadHistory(q: Queryable, cache: ProjectCache, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await rowsByKeys<StoredRow & { session_id: string }>(q, [...ids], (chunk) => ({
    sql: `SELECT session_id, event_id, event, type, epoch_ms(ts)::DOUBLE AS ts, conversation_id,
            properties::VARCHAR AS properties, device_id, rowid::DOUBLE AS seq FROM events
           WHERE project_id = $1 AND session_id IN (SELECT unnest($2)) AND origin_event_id IS NULL
             AND type NOT IN ('identify', 'alias')`,
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

interface Replayed {
  event: WireEvent;
  ts: number;
  /** The request's index of a new event; undefined for a stored one. */
  index: number | undefined;
  /** Arrival order: a stored row's seq, then the request's events in their order. */
  arrival: number;
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

const byTimeRankId = (a: Replayed, b: Replayed): number =>
  sortTime(a) - sortTime(b) ||
  a.ts - b.ts ||
  eventRank(a.event) - eventRank(b.event) ||
  byId(a.event.event_id ?? '', b.event.event_id ?? '');

/**
 * A client's events of one instant stay in the order they came, as the planner took them: ranked,
 * a turn sent after a `Conversation Ended` of the same instant went before it, and two conversations
 * became one (found by probing, with events sent without a timestamp).
 */
const byTimeArrival = (a: Replayed, b: Replayed): number =>
  sortTime(a) - sortTime(b) || a.ts - b.ts || a.arrival - b.arrival;

/**
 * Reopens stored sessions with new history (reopen-plan.ts says when): every row of them (identity
 * rows aside) is deleted and their stored caller events are planned again, as one session named
 * `target`, together with the request's, in time order, exactly as one run over all of them would
 * plan them. Starts, ends and summaries are made again under the same ids. A stored event that
 * conflicts with the new history refuses the request (nothing is lost: the deletion is only written
 * if the request is accepted).
 */
export function replanSession(p: Planner, replay: Replay, events: readonly WireEvent[]): void {
  const { target, indices } = replay;
  const at = indices[0]!;
  const sessions = replay.sessions.map((id) => {
    const s = p.cache.sessions.get(id);
    const history = p.cache.history.get(id);
    if (!s || !history) throw new Error(`session "${id}" was reopened before its history was loaded`);
    return { s, history };
  });
  const merged: Replayed[] = [];
  for (const { s, history } of sessions) {
    for (const row of history) {
      const event = wireOf(row, target, s.id, p.history || s.id !== target);
      if (typeof event === 'string') {
        p.conflict(at, 'session_id', `${event}; session "${s.id}" cannot take new history`);
        return;
      }
      merged.push({ event, ts: row.ts, index: undefined, arrival: row.seq });
    }
  }
  for (const index of indices) {
    const sent = events[index]!;
    // As the planner does for any event: one sent without an id gets a fresh one.
    const event = {
      ...sent,
      session_id: target,
      event_id: sent.event_id ?? newEventId(p.receivedAt),
    } as WireEvent;
    const ts = event.timestamp === undefined ? p.receivedAt : Date.parse(event.timestamp);
    merged.push({ event, ts, index, arrival: Number.MAX_SAFE_INTEGER / 2 + index });
  }
  // An end the import added closes the session after its last event, wherever its own time falls.
  const latest = Math.max(...merged.map((r) => r.ts));
  for (const r of merged) if (isProvisionalEnd(r.event)) r.ts = Math.max(r.ts, latest);
  // History is ordered as the importer sorts it (by rank, then content), so any split of the runs
  // replays alike.
  merged.sort(p.history ? byTimeRankId : byTimeArrival);
  for (const { s } of sessions) p.wipe(s, target);
  const owner = sessions[0]!.s;
  const segments = segmentsOf(merged, replay.key).filter((segment) => {
    // An import's end after the data's own end ends nothing: it is no session of its own.
    const onlyEnds = segment.every((r) => isProvisionalEnd(r.event));
    if (onlyEnds) for (const r of segment) if (r.index !== undefined) p.duplicates++;
    return !onlyEnds;
  });
  const last = segments[segments.length - 1];
  if (!last) return;
  // New history within the stored sessions' time leaves an end the import added where it was: the
  // run sending it may end its own session elsewhere (with an end the data states), and then no end
  // of that run would come to close what is now open. History past it reopens the session, for the
  // run's own end to close.
  const storedLast = Math.max(...sessions.map(({ s }) => s.lastEventAt));
  const extended = merged.some(
    (r) => r.index !== undefined && r.event.kind !== 'end_session' && r.ts > storedLast,
  );
  const provisional = sessions.some(({ s }) => s.provisionalEnd !== null);
  if (provisional && (segments.length > 1 || !extended)) endAgain(p, last, target);
  const known = merged.some((r) => namedDevice(r) !== null);
  for (const [n, segment] of segments.entries()) {
    const id = n === 0 ? target : derivedSessionId(replay.key!, segment[0]!.ts);
    // Events stored before their devices were recorded (migration 6) name none: the session keeps its own.
    const device = known ? firstDevice(segment) : n === 0 ? owner.deviceId : null;
    replaySegment(p, segment, id, owner, device, replay.key, at);
  }
}

const namedDevice = (r: Replayed): string | null =>
  ('device_id' in r.event ? r.event.device_id : undefined) ?? null;

/** The first device a part's events name, in time order (sessionFor fills it from later ones). */
function firstDevice(segment: readonly Replayed[]): string | null {
  for (const r of segment) {
    const device = namedDevice(r);
    if (device !== null) return device;
  }
  return null;
}

/**
 * The import had ended what is now the last part of a replay: it ends again, as the importer ends a
 * session (unless the data's own end is there). An import's end sent with this history ends nothing
 * new: a duplicate, as it would be if it came in a request of its own after this one.
 */
function endAgain(p: Planner, last: Replayed[], target: string): void {
  for (let i = last.length - 1; i >= 0; i--) {
    if (!isProvisionalEnd(last[i]!.event)) continue;
    if (last[i]!.index !== undefined) p.duplicates++;
    last.splice(i, 1);
  }
  if (last.some((r) => r.event.kind === 'end_session')) return;
  const ts = Math.max(...last.map((r) => r.ts));
  const end = { kind: 'end_session', type: 'end_session', session_id: target, provisional: true } as const;
  last.push({
    event: { ...end, timestamp: new Date(ts).toISOString() },
    ts,
    index: undefined,
    arrival: Number.MAX_SAFE_INTEGER,
  });
}

/**
 * A derived session ends at an end_session the data states: what comes after it is a session of
 * its own (as the importer splits one run), so a replay splits there too.
 */
function segmentsOf(merged: readonly Replayed[], key: string | null): Replayed[][] {
  const segments: Replayed[][] = [[]];
  merged.forEach((r, i) => {
    segments[segments.length - 1]!.push(r);
    const finalEnd = r.event.kind === 'end_session' && r.event.provisional !== true;
    if (key !== null && finalEnd && i < merged.length - 1) segments.push([]);
  });
  return segments;
}

/** One session of a replay: opened as `id` (the stored user and device), its events planned in order. */
function replaySegment(
  p: Planner,
  segment: readonly Replayed[],
  id: string,
  owner: { userId: string },
  /** The segment's device (firstDevice). */
  device: string | null,
  key: string | null,
  at: number,
): void {
  const ctx = (r: Replayed): EventCtx => ({
    index: r.index ?? at,
    ts: r.ts,
    eventId: r.event.event_id ?? '',
  });
  const first = segment[0]!;
  const explicit = first.event.kind === 'start_session';
  p.ownRows(first.index);
  const reopened = openSession(p, id, owner.userId, device, ctx(first), explicit);
  for (const r of segment) p.touchSession(reopened, r.ts);
  reopened.derivedKey = key;
  for (const r of segment) {
    const x = ctx(r);
    const event = r.event.session_id === id ? r.event : ({ ...r.event, session_id: id } as WireEvent);
    p.ownRows(r.index);
    if (r === first && event.kind === 'start_session') {
      // The explicit start: its row, as planStart writes it (the session is open already).
      if (r.index !== undefined) p.accepted++;
      reopened.attributes = mergeProps(reopened.attributes, event.attributes);
      if (event.device_id !== undefined) claimForUser(p, reopened, undefined, event.device_id, x.ts);
      p.row({
        eventId: x.eventId,
        event: 'Session Started',
        type: 'start_session',
        ts: x.ts,
        userId: p.userOf(reopened),
        sessionId: id,
        conversationId: null,
        properties: event.attributes ?? null,
        originEventId: null,
      });
      continue;
    }
    if (r.index === undefined) {
      if (!planSessionEvent(p, event, x)) planConversationEvent(p, event, x);
      continue;
    }
    p.planOne(event, x);
  }
}
