import type { WireEvent, WireEventOf } from '../../shared/event-bodies.js';
import { EVENT_NAMES } from '../../shared/event-names.js';
import { alias, claimDevice, identify, identifyUser, idSeen, userOfCallerId } from '../identity/rules.js';
import { type EventCtx, iso, type Planner } from './planner.js';
import { generatedId } from './rows.js';
import { mergeProps, newSession, type SessionState } from './state.js';

interface SessionRef {
  session_id: string;
  user_id?: string | undefined;
  device_id?: string | undefined;
  /** Import extension: the key of a derived session (it may later join others of that key). */
  session_key?: string | undefined;
}

/**
 * The session an event belongs to. An unknown session opens here (decisions §4), recording
 * `Session Started` at the event's time unless the event is the explicit start; it needs a user or a
 * device. An ended session refuses further events (409), and so does a second explicit start.
 */
export function sessionFor(
  p: Planner,
  e: SessionRef,
  x: EventCtx,
  options: { explicitStart?: boolean; userId?: string } = {},
): SessionState | undefined {
  const existing = p.cache.session(e.session_id);
  if (existing) {
    if (existing.endedAt !== null) {
      p.conflict(
        x.index,
        'session_id',
        `session "${existing.id}" ended at ${iso(existing.endedAt)}`,
        'session_ended',
      );
      return undefined;
    }
    if (options.explicitStart) {
      p.conflict(
        x.index,
        'session_id',
        `session "${existing.id}" was already started at ${iso(existing.startedAt)}`,
      );
      return undefined;
    }
    p.touchSession(existing, x.ts);
    if (e.user_id !== undefined) idSeen(p.maps, p.ch, e.user_id, x.ts);
    // A session's device is the first one its events name, whichever event opened it.
    if (existing.deviceId === null && e.device_id !== undefined) existing.deviceId = e.device_id;
    if (e.device_id !== undefined) claimForUser(p, existing, e.user_id, e.device_id, x.ts);
    return existing;
  }
  let userId = options.userId;
  if (userId === undefined) {
    if (e.user_id === undefined && e.device_id === undefined) {
      p.invalidInput(
        x.index,
        'user_id',
        `session "${e.session_id}" is new: it needs user_id (or id) or device_id`,
      );
      return undefined;
    }
    userId = identify(p.maps, p.ch, { id: e.user_id, device_id: e.device_id }, x.ts);
  }
  const s = openSession(p, e.session_id, userId, e.device_id ?? null, x, options.explicitStart === true);
  if (e.session_key !== undefined) {
    s.derivedKey = e.session_key;
    p.cache.known.derivedKeys.add(e.session_key);
  }
  return s;
}

/**
 * A device an event of an identified user's session names is that user's, as it is when the event
 * opens the session (identify): linked, its anonymous user merged in. Whichever event of the session
 * names it, so the stored state does not depend on which event came first, which an import split
 * into runs changes (test/import-order.test.ts). Not for an event naming another user (a conflict).
 */
export function claimForUser(
  p: Planner,
  s: SessionState,
  eventUser: string | undefined,
  device: string,
  at: number,
): void {
  const user = p.userOf(s);
  if (p.maps.user(user).anonymous) return;
  if (eventUser !== undefined && userOfCallerId(p.maps, eventUser) !== user) return;
  claimDevice(p.maps, p.ch, user, device, at);
}

/**
 * A new session in the cache, recording `Session Started` at the event's time unless the event is
 * the explicit start (which records its own row). Also used to reopen a session whose history is
 * replayed (replan.ts).
 */
export function openSession(
  p: Planner,
  id: string,
  userId: string,
  deviceId: string | null,
  x: EventCtx,
  explicitStart: boolean,
): SessionState {
  const s = newSession(id, userId, deviceId, x.ts);
  p.cache.sessions.set(s.id, s);
  p.cache.known.sessions.add(s.id);
  p.cache.absent.sessions.delete(s.id);
  p.touchSession(s, x.ts);
  if (!explicitStart) {
    p.row({
      eventId: generatedId(x.eventId, 'session-started'),
      event: EVENT_NAMES.sessionStarted,
      type: 'start_session',
      ts: x.ts,
      userId: p.userOf(s),
      sessionId: s.id,
      conversationId: null,
      properties: null,
      originEventId: x.eventId,
    });
  }
  return s;
}

/**
 * One session, one user (decisions §4). An event naming the session's user is fine; naming another
 * user while the session is still anonymous identifies it (the device is linked and its anonymous
 * history merges, as a session user identify would); naming a different identified user is a conflict.
 * The event's own device, when it names another than the session's, is claimed too, as it would be
 * had the event opened the session: which event does depends on how an import is split.
 */
/** An event of another user in a session an identified user has: a conflict (409), and true. */
function refusedAsAnothers(p: Planner, s: SessionState, field: string, x: EventCtx): boolean {
  const owner = p.maps.user(p.userOf(s));
  if (owner.anonymous) return false;
  p.conflict(
    x.index,
    field,
    `session "${s.id}" belongs to user "${owner.primaryId}"; one session has one user`,
  );
  return true;
}

export function checkUser(
  p: Planner,
  s: SessionState,
  userId: string | undefined,
  x: EventCtx,
  device?: string | undefined,
): boolean {
  if (userId === undefined) return true;
  if (userOfCallerId(p.maps, userId) === p.userOf(s)) return true;
  if (refusedAsAnothers(p, s, 'user_id', x)) return false;
  s.userId = identify(p.maps, p.ch, { id: userId, device_id: s.deviceId ?? undefined }, x.ts);
  if (device !== undefined && device !== s.deviceId) claimDevice(p.maps, p.ch, s.userId, device, x.ts);
  return true;
}

function planIdentify(p: Planner, e: WireEventOf<'identify'>, x: EventCtx): void {
  const input = { id: e.user_id, device_id: e.device_id, traits: e.traits };
  let s: SessionState | undefined;
  let userId: string;
  if (e.session_id === undefined) {
    userId = identify(p.maps, p.ch, input, x.ts);
  } else {
    const known = p.cache.session(e.session_id) !== undefined;
    s = known ? sessionFor(p, { session_id: e.session_id }, x) : undefined;
    if (known && (!s || !checkUser(p, s, e.user_id, x))) return;
    const sessionUser = s === undefined ? undefined : p.userOf(s);
    if (e.user_id === undefined && sessionUser !== undefined && !p.maps.user(sessionUser).anonymous) {
      // Naming no user, it is about the session's, as the session's events are: a device-only
      // identify made a second, anonymous user of the same person (found by probing).
      userId = identifyUser(p.maps, p.ch, sessionUser, input, x.ts);
    } else {
      userId = identify(p.maps, p.ch, { ...input, device_id: e.device_id ?? s?.deviceId ?? undefined }, x.ts);
    }
    s ??= sessionFor(p, { session_id: e.session_id, device_id: e.device_id }, x, { userId });
    if (!s) return;
  }
  p.row({
    eventId: x.eventId,
    event: EVENT_NAMES.userIdentified,
    type: 'identify',
    ts: x.ts,
    userId,
    sessionId: s?.id ?? null,
    conversationId: null,
    properties: e.traits ?? null,
    originEventId: null,
    ...(e.device_id === undefined ? {} : { deviceId: e.device_id }),
  });
}

function planAlias(p: Planner, e: WireEventOf<'alias'>, x: EventCtx): void {
  // One session has one user: an alias of another identified user's is refused there, as an
  // identify of that user is (decisions §4; it was taken: found by probing).
  const stored = e.session_id === undefined ? undefined : p.cache.session(e.session_id);
  const named = userOfCallerId(p.maps, e.previous_id);
  if (
    stored !== undefined &&
    named !== undefined &&
    p.maps.canonical(named) !== p.userOf(stored) &&
    refusedAsAnothers(p, stored, 'previous_id', x)
  )
    return;
  const outcome = alias(p.maps, p.ch, { id: e.id, previous_id: e.previous_id }, x.ts);
  if (!outcome.ok) {
    if (outcome.reason === 'unknown_previous')
      p.conflict(x.index, 'previous_id', `no user has the id "${e.previous_id}"`, 'unknown_previous');
    else p.conflict(x.index, 'id', `the id "${e.id}" already belongs to another user`);
    return;
  }
  const s =
    e.session_id === undefined
      ? undefined
      : sessionFor(p, { session_id: e.session_id }, x, { userId: outcome.userId });
  if (e.session_id !== undefined && !s) return;
  p.row({
    eventId: x.eventId,
    event: EVENT_NAMES.userAliased,
    type: 'alias',
    ts: x.ts,
    userId: outcome.userId,
    sessionId: s?.id ?? null,
    conversationId: null,
    properties: { id: e.id, previous_id: e.previous_id },
    originEventId: null,
  });
}

function planStart(p: Planner, e: WireEventOf<'start_session'>, x: EventCtx): void {
  const s = sessionFor(p, e, x, { explicitStart: true });
  if (!s) return;
  s.attributes = mergeProps(s.attributes, e.attributes);
  p.row({
    eventId: x.eventId,
    event: EVENT_NAMES.sessionStarted,
    type: 'start_session',
    ts: x.ts,
    userId: p.userOf(s),
    sessionId: s.id,
    conversationId: null,
    properties: e.attributes ?? null,
    originEventId: null,
    ...(e.device_id === undefined ? {} : { deviceId: e.device_id }),
  });
}

/**
 * end_session closes every open conversation (each analysed), then the session, at the given time.
 * An end the importer added (`provisional`, our extension) ends the session at its last event and
 * each conversation at its own, under ids derived from the session, so whichever run ends it last
 * writes the same rows; for a session already ended, or unknown, it is a duplicate (nothing to end).
 */
function planEnd(p: Planner, e: WireEventOf<'end_session'>, x: EventCtx): void {
  let end = x;
  if (e.provisional === true) {
    const known = p.cache.session(e.session_id);
    if (!known || known.endedAt !== null) {
      p.markDuplicate();
      return;
    }
    end = { ...x, ts: known.lastEventAt, eventId: generatedId(known.id, 'end') };
  }
  // Before sessionFor, which would move the start back to the end. Replayed, such an end closed the
  // session before its own events, which then conflicted ("ended at" an end that never was); planned
  // in place, it stored Session Ended before Session Started.
  const started = p.cache.session(e.session_id);
  if (started && started.endedAt === null && end.ts < started.startedAt) {
    p.conflict(
      x.index,
      'timestamp',
      `session "${started.id}" started at ${iso(started.startedAt)}: it cannot end before that, at ${iso(end.ts)}`,
    );
    return;
  }
  if (
    started &&
    started.endedAt === null &&
    end.ts < started.lastEventAt &&
    e.provisional !== true &&
    !p.replaying
  ) {
    // Planned, it stored Session Ended before events of the session, stored or earlier in the
    // request, where an import's end is refused the same way in a replay (found by probing).
    p.conflict(
      x.index,
      'timestamp',
      `session "${started.id}" has events until ${iso(started.lastEventAt)}: it cannot end before them, at ${iso(end.ts)}`,
    );
    return;
  }
  const late = started?.open
    .map((id) => p.cache.conversation(started.id, id))
    .find((c) => c !== undefined && end.ts < c.startedAt);
  if (late && e.provisional !== true) {
    p.conflict(
      x.index,
      'timestamp',
      `conversation "${late.id}" of session "${late.sessionId}" started at ${iso(late.startedAt)}: the session cannot end before that, at ${iso(end.ts)}`,
    );
    return;
  }
  const s = sessionFor(p, e, end);
  if (!s || !checkUser(p, s, e.user_id, end, e.device_id)) return;
  for (const id of [...s.open]) {
    const c = p.cache.conversation(s.id, id);
    if (!c) continue;
    const at = e.provisional === true ? { ...end, ts: c.lastEventAt } : end;
    p.row({
      eventId: generatedId(end.eventId, `conversation-ended:${c.id}`),
      event: EVENT_NAMES.conversationEnded,
      type: 'track',
      ts: at.ts,
      userId: p.userOf(s),
      sessionId: s.id,
      conversationId: c.id,
      properties: null,
      originEventId: end.eventId,
    });
    p.close(s, c, at);
  }
  s.endedAt = end.ts;
  s.provisionalEnd = e.provisional === true ? end.eventId : null;
  s.attributes = mergeProps(s.attributes, e.attributes);
  p.row({
    eventId: end.eventId,
    event: EVENT_NAMES.sessionEnded,
    type: 'end_session',
    ts: end.ts,
    userId: p.userOf(s),
    sessionId: s.id,
    conversationId: null,
    properties: e.attributes ?? null,
    originEventId: null,
    ...(e.device_id === undefined ? {} : { deviceId: e.device_id }),
  });
}

/** Plans the session-level kinds; false for the conversation-level ones. */
export function planSessionEvent(p: Planner, e: WireEvent, x: EventCtx): boolean {
  switch (e.kind) {
    case 'identify':
      planIdentify(p, e, x);
      return true;
    case 'alias':
      planAlias(p, e, x);
      return true;
    case 'start_session':
      planStart(p, e, x);
      return true;
    case 'end_session':
      planEnd(p, e, x);
      return true;
    default:
      return false;
  }
}
