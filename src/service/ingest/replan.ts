import { derivedSessionId } from '../../shared/derived-session.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import { planConversationEvent } from './plan-conversation.js';
import { claimForUser, openSession, planSessionEvent } from './plan-session.js';
import { type EventCtx, iso, type Planner } from './planner.js';
import { isProvisionalEnd, type Replay } from './reopen-plan.js';
import { byTimeArrival, byTimeRankId, type Replayed, storedPoint } from './replay-rows.js';
import { newEventId } from './rows.js';
import { mergeProps } from './state.js';

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
      const point = storedPoint(row, target, s.id, p.history || s.id !== target);
      if (typeof point === 'string') {
        p.conflict(at, 'session_id', `${point}; session "${s.id}" cannot take new history`);
        return;
      }
      merged.push(point);
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
  // run's own end to close, when the request holds one: an import's history sent without (its end
  // the data states was refused, or comes in a later request) left the session open for good, its
  // summaries gone (found by split-run fuzzing); ended again, a later end of the run replays it once
  // more. A client's late event (not history) reopens it as before, for the client to go on.
  const storedLast = Math.max(...sessions.map(({ s }) => s.lastEventAt));
  const extended = merged.some(
    (r) => r.index !== undefined && r.event.kind !== 'end_session' && r.ts > storedLast,
  );
  const unended = p.history && !merged.some((r) => r.index !== undefined && r.event.kind === 'end_session');
  const provisional = sessions.some(({ s }) => s.provisionalEnd !== null);
  if (provisional && (segments.length > 1 || !extended || unended)) endAgain(p, last, target);
  const known = merged.some((r) => namedDevice(r) !== null);
  const ids = segments.map((segment, n) =>
    n === 0 ? target : derivedSessionId(replay.key!, segment[0]!.ts),
  );
  // A name another session has (a caller's own id of that form, or a session of the request), or
  // one nobody loaded: opened afresh, it was stored twice (found by probing).
  const taken = ids.find(
    (id) => !replay.sessions.includes(id) && (p.cache.sessions.has(id) || p.cache.needsSession(id)),
  );
  if (taken !== undefined) {
    p.conflict(
      at,
      'session_id',
      `the session this history makes is named "${taken}", which another session has; send its events with a session_id`,
    );
    return;
  }
  // Two parts starting at the same instant, after an end the data states, have one name: planned
  // as one session, it held two starts and two ends (found by probing). The later part is refused,
  // as an event after a session's final end is.
  const twice = ids.find((id, n) => ids.indexOf(id) !== n);
  if (twice !== undefined) {
    const n = ids.lastIndexOf(twice);
    const index = segments[n]!.find((r) => r.index !== undefined)?.index ?? at;
    p.conflict(
      index,
      'session_id',
      `session "${twice}" ended at ${iso(segments[n]![0]!.ts)}: its end is final`,
    );
    return;
  }
  for (const [n, segment] of segments.entries()) {
    const id = ids[n]!;
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

/** The conversation an event names, if any. */
const conversationOf = (e: WireEvent): string | undefined =>
  'conversation_id' in e ? e.conversation_id : undefined;

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
  p.cache.rebuilt.add(id);
  const reopened = openSession(p, id, owner.userId, device, ctx(first), explicit);
  for (const r of segment) p.touchSession(reopened, r.ts);
  reopened.derivedKey = key;
  /** The request's final end already planned in this segment, if any. */
  let endedBy: number | undefined;
  /** The request's ends of named conversations planned in this segment: conversation → index. */
  const closedBy = new Map<string, { index: number; ts: number }>();
  for (const r of segment) {
    if (r.anchor) continue;
    const x = ctx(r);
    if (r.index === undefined && endedBy !== undefined && reopened.endedAt !== null) {
      // A stored event after the request's end: the end is what conflicts, said once. Each stored
      // event was refused instead, under the request's first index (found by probing).
      const last = Math.max(...segment.filter((s) => s.index === undefined && !s.anchor).map((s) => s.ts));
      p.conflict(
        endedBy,
        'timestamp',
        `session "${id}" has events until ${iso(last)}: it cannot end before them`,
      );
      return;
    }
    const named = conversationOf(r.event);
    const closer = r.index === undefined && named !== undefined ? closedBy.get(named) : undefined;
    if (closer !== undefined) {
      // A stored event of a conversation the request's end closed before it: the end is what
      // conflicts, as for a session's end (it read "closed at" the end's own time, refusing the
      // request as if the conversation had been closed: found by probing).
      const last = Math.max(
        ...segment
          .filter((o) => o.index === undefined && !o.anchor && conversationOf(o.event) === named)
          .map((o) => o.ts),
      );
      p.conflict(
        closer.index,
        'timestamp',
        `conversation "${named}" has events until ${iso(last)}: it cannot end before them, at ${iso(closer.ts)}`,
      );
      return;
    }
    if (
      r !== first &&
      r.index === undefined &&
      r.event.kind === 'start_session' &&
      first.event.kind === 'start_session'
    ) {
      // The stored explicit start after the request's: the request's start is what conflicts, and
      // with the stored start's time (it named its own, found by probing).
      p.conflict(first.index ?? at, 'session_id', `session "${id}" was already started at ${iso(r.ts)}`);
      return;
    }
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
    if (event.kind === 'end_session' && event.provisional !== true) endedBy = r.index;
    if (
      event.kind === 'end_conversation' &&
      event.conversation_id !== undefined &&
      !closedBy.has(event.conversation_id)
    )
      closedBy.set(event.conversation_id, { index: r.index, ts: r.ts });
  }
}
