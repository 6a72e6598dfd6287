import { derivedSessionId } from '../../shared/derived-session.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import { conversationKey } from './conversation-key.js';
import type { ProjectCache } from './project-cache.js';
import type { ConversationState, SessionState } from './state.js';

/** Sessions replayed as one (target) with some of the request's events (replan.ts). */
export interface Replay {
  target: string;
  /** The derived-session key of the target, if it is a derived session. */
  key: string | null;
  /** Stored sessions whose rows are replayed (and deleted), in any order. */
  sessions: string[];
  /** The request's events that join them, by index. */
  indices: number[];
}

export interface ReopenPlan {
  /** Keyed by the first index of each replay's events. */
  replays: Map<number, Replay>;
  /** Events that belong to another stored session than the one they name (a derived session joined). */
  reroute: Map<number, string>;
}

const CONVERSATION_KINDS: ReadonlySet<string> = new Set([
  'turn',
  'usage',
  'function',
  'start_conversation',
  'end_conversation',
]);

/** An end the importer added (decisions §4 extension): later history may reopen what it ended. */
export const isProvisionalEnd = (e: WireEvent): boolean => e.kind === 'end_session' && e.provisional === true;
const timeOf = (e: WireEvent, receivedAt: number): number =>
  e.timestamp === undefined ? receivedAt : Date.parse(e.timestamp);

/**
 * An event older than what it joins: the session's start, or the start (or a final end) of the
 * conversation it names or would join. Planned in place it would leave the starts where they were;
 * one run over all the events would have started them with it.
 */
function beforeItsPlace(
  cache: ProjectCache,
  s: SessionState,
  e: WireEvent,
  ts: number,
  history: boolean,
): boolean {
  const c = joined(cache, s, e);
  // A client's event for a conversation a final end closed is refused where it is planned (409
  // conversation_closed), whatever its time: replayed before that end, it was taken, and the
  // conversation's summary rewritten (found by probing).
  if (!history && c !== undefined && c.endedAt !== null) return false;
  // An end of a conversation before its start is refused where it is planned (plan-conversation.ts):
  // replayed, the end came first and closed a conversation of that name, and the stored turns after
  // it were refused as closed, a 409 conversation_closed for a conversation still open (found by
  // probing). An import holds such an end back until the conversation's first record is sent
  // (importer/sessionizer.ts), so one run over all the records refuses it too.
  if (e.kind === 'end_conversation' && c !== undefined && ts < c.startedAt) return false;
  // A final end before the start is refused where it is planned (plan-session.ts), not replayed.
  if (ts < s.startedAt) return e.kind !== 'end_session';
  return c !== undefined && (ts < c.startedAt || (history && c.endedAt !== null && ts < c.endedAt));
}

/** The stored conversation an event names, or the open one a conversation kind joins unnamed. */
function joined(cache: ProjectCache, s: SessionState, e: WireEvent): ConversationState | undefined {
  const named = 'conversation_id' in e ? e.conversation_id : undefined;
  const id = named ?? (CONVERSATION_KINDS.has(e.kind) && s.open.length === 1 ? s.open[0] : undefined);
  return id === undefined ? undefined : cache.conversations.get(conversationKey(s.id, id));
}

/**
 * A session must be replayed with new history (decisions §4, our import extension) when its end was
 * added by an import (provisional) and anything but such an end arrives, when history (an import)
 * brings an event older than a final end (it belongs before the end, as one run would place it), or
 * when an event older than the start of what it joins arrives. A client's event for a session or
 * conversation its final end closed is refused instead (409), whatever its time.
 */
function needsReplay(
  cache: ProjectCache,
  s: SessionState,
  e: WireEvent,
  ts: number,
  history: boolean,
): boolean {
  if (isProvisionalEnd(e)) return false;
  if (s.endedAt === null) return beforeItsPlace(cache, s, e, ts, history);
  if (s.provisionalEnd !== null) return true;
  return history && ts < s.endedAt && e.kind !== 'end_session';
}

/**
 * A point of a derived session that cannot be planned in place in the one stored session it joins:
 * that session has an end (the import's, or a final one), or the point is older than what it joins,
 * or it is an end the data states before events already stored (one run would start a new session
 * after it, so the stored session splits there).
 */
function lateFor(cache: ProjectCache, s: SessionState, e: WireEvent, ts: number): boolean {
  if (s.endedAt !== null) return true;
  if (e.kind === 'end_session') return ts < s.lastEventAt;
  // Derived sessions (session_key) come only from imports, whose batches are history.
  return beforeItsPlace(cache, s, e, ts, true);
}

function find(parent: Map<string, string>, x: string): string {
  let root = x;
  while (parent.get(root) !== root) root = parent.get(root) ?? root;
  parent.set(x, root);
  return root;
}

/**
 * Derived sessions of one key (decisions §4 extension): the request's events join every stored
 * session of that key they fall within the gap of (a final end closes a session to later events);
 * events the importer put in one session stay together. A group with stored sessions becomes one
 * session named by `derivedSessionId(key, earliest start)`: the same name one run would give.
 */
function planKey(
  cache: ProjectCache,
  events: readonly WireEvent[],
  stored: readonly SessionState[],
  points: Array<{ index: number; ts: number; gap: number; session: string; end: boolean }>,
  plan: ReopenPlan,
): void {
  const key = stored[0]?.derivedKey;
  if (key === undefined || key === null) return;
  const parent = new Map<string, string>();
  const node = (id: string) => {
    if (!parent.has(id)) parent.set(id, id);
    return id;
  };
  const union = (a: string, b: string) => parent.set(find(parent, node(a)), find(parent, node(b)));
  for (const s of stored) node(s.id);
  for (const p of points) {
    node(p.session);
    for (const s of stored) {
      const closedBefore = s.endedAt !== null && s.provisionalEnd === null && p.ts > s.endedAt;
      if (!closedBefore && p.ts >= s.startedAt - p.gap && p.ts <= s.lastEventAt + p.gap)
        union(p.session, s.id);
    }
  }
  const groups = new Map<string, { sessions: SessionState[]; points: typeof points }>();
  const group = (id: string) => {
    const root = find(parent, id);
    const found = groups.get(root);
    if (found) return found;
    const g = { sessions: [] as SessionState[], points: [] as typeof points };
    groups.set(root, g);
    return g;
  };
  for (const s of stored) group(s.id).sessions.push(s);
  for (const p of points) group(p.session).points.push(p);
  for (const { sessions, points: pts } of groups.values()) {
    if (pts.length === 0) continue;
    if (sessions.length === 0) {
      nameFromPoints(key, pts, plan);
      continue;
    }
    const start = Math.min(...sessions.map((s) => s.startedAt), ...pts.map((p) => p.ts));
    const target = derivedSessionId(key, start);
    const only = sessions.length === 1 ? sessions[0]! : undefined;
    const onlyEnds = pts.every((p) => p.end);
    if (onlyEnds && (!only || only.endedAt !== null)) {
      // An import's end for a session already ended (or merged away): the planner finds nothing to end.
      if (only) for (const p of pts) plan.reroute.set(p.index, only.id);
      continue;
    }
    const late =
      only !== undefined && pts.some((p) => !p.end && lateFor(cache, only, events[p.index]!, p.ts));
    if (only && only.id === target && !late) {
      for (const p of pts) if (p.session !== target) plan.reroute.set(p.index, target);
      continue;
    }
    const indices = pts.map((p) => p.index).sort((a, b) => a - b);
    plan.replays.set(indices[0]!, { target, key, sessions: sessions.map((s) => s.id), indices });
  }
}

/**
 * A derived session that joins no stored one keeps the name of its own start. The importer named it
 * from its earliest record, which may be a duplicate of a stored event (of a session the data ended
 * before this one) and so is not among the points: one run, which saw that end, names the session
 * from what it holds (a split import's property test found it).
 */
function nameFromPoints(
  key: string,
  pts: ReadonlyArray<{ index: number; ts: number; session: string; end: boolean }>,
  plan: ReopenPlan,
): void {
  if (pts.every((p) => p.end)) return;
  const target = derivedSessionId(key, Math.min(...pts.map((p) => p.ts)));
  for (const p of pts) if (p.session !== target) plan.reroute.set(p.index, target);
}

/**
 * Which of the request's events reopen (replay) stored sessions, and which join a stored session
 * under another name. Pure over the cache as prefetch left it, so prefetch (to load the histories)
 * and the planner agree.
 */
export function reopenPlan(
  cache: ProjectCache,
  events: readonly WireEvent[],
  duplicate: readonly boolean[],
  receivedAt: number,
  /** IngestOptions.history. */
  history = false,
): ReopenPlan {
  const plan: ReopenPlan = { replays: new Map(), reroute: new Map() };
  const bySession = new Map<string, number[]>();
  const byKey = new Map<
    string,
    Array<{ index: number; ts: number; gap: number; session: string; end: boolean }>
  >();
  events.forEach((e, index) => {
    if (duplicate[index] || e.session_id === undefined) return;
    const key = 'session_key' in e ? e.session_key : undefined;
    const gap = 'session_gap_ms' in e ? e.session_gap_ms : undefined;
    if (key !== undefined && gap !== undefined && e.timestamp !== undefined) {
      const points = byKey.get(key) ?? [];
      points.push({ index, ts: timeOf(e, receivedAt), gap, session: e.session_id, end: isProvisionalEnd(e) });
      byKey.set(key, points);
      return;
    }
    const list = bySession.get(e.session_id);
    if (list) list.push(index);
    else bySession.set(e.session_id, [index]);
  });
  for (const [session, indices] of bySession) {
    const s = cache.sessions.get(session);
    if (
      !s ||
      !indices.some((i) => needsReplay(cache, s, events[i]!, timeOf(events[i]!, receivedAt), history))
    )
      continue;
    plan.replays.set(indices[0]!, { target: session, key: s.derivedKey, sessions: [session], indices });
  }
  if (byKey.size === 0) return plan;
  // One pass over the cache: the stored derived sessions of the request's keys.
  const storedByKey = new Map<string, SessionState[]>();
  for (const s of cache.sessions.values()) {
    if (s.derivedKey === null || !byKey.has(s.derivedKey)) continue;
    const list = storedByKey.get(s.derivedKey);
    if (list) list.push(s);
    else storedByKey.set(s.derivedKey, [s]);
  }
  for (const [key, points] of byKey) planKey(cache, events, storedByKey.get(key) ?? [], points, plan);
  joinOverlapping(plan);
  return plan;
}

/**
 * A stored session reopened both by events naming it and by events of its key that fall within the
 * gap is replayed once, with all of them, under the key's name: two replays of it deleted it twice,
 * and the second found its history gone (a 500, found by fuzzing).
 */
function joinOverlapping(plan: ReopenPlan): void {
  if (plan.replays.size < 2) return;
  const bySession = new Map<string, Replay>();
  for (const [first, replay] of [...plan.replays]) {
    const others = [...new Set(replay.sessions.flatMap((id) => bySession.get(id) ?? []))];
    if (others.length === 0) {
      for (const id of replay.sessions) bySession.set(id, replay);
      continue;
    }
    // Replays of events naming their session come first (reopenPlan), so `replay` is the key's.
    const all = [...others, replay];
    const joined: Replay = {
      target: replay.target,
      key: replay.key,
      sessions: [...new Set(all.flatMap((r) => r.sessions))],
      indices: [...new Set(all.flatMap((r) => r.indices))].sort((a, b) => a - b),
    };
    plan.replays.delete(first);
    for (const other of others) plan.replays.delete(other.indices[0]!);
    plan.replays.set(joined.indices[0]!, joined);
    for (const id of joined.sessions) bySession.set(id, joined);
  }
}

/** Every stored session a plan replays (prefetch loads their histories). */
export function replayedSessions(plan: ReopenPlan): string[] {
  return [...new Set([...plan.replays.values()].flatMap((r) => r.sessions))];
}
