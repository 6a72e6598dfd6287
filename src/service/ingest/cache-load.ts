import type { WireEvent } from '../../shared/event-bodies.js';
import { EVENT_NAMES } from '../../shared/event-names.js';
import type { Properties, Traits } from '../../shared/primitives.js';
import { loadIntentRules } from '../analysis/intent-rules.js';
import { anonymousId } from '../identity/ids.js';
import { loadIdentity } from '../identity/store.js';
import type { Queryable } from '../store/database.js';
import { column, int, rows, rowsByKeys, text, texts } from '../store/statements.js';
import { type ConversationKey, conversationKey, conversationKeySql, keyOf } from './conversation-key.js';
import { EventIdFilter, KnownIds } from './known-ids.js';
import { unloadedPlanNames } from './plan-names.js';
import { ProjectCache } from './project-cache.js';
import { reopenPlan, replayedSessions } from './reopen-plan.js';
import { loadHistory } from './replay-rows.js';
import { type ConversationState, emptyTotals, type SessionState } from './state.js';
import { accumulate, type CountedKind } from './totals.js';

/** Rows per statement of a filter's load: each answers one JSON array, ~5 MB at 65,536 event ids. */
const LOAD_ROWS = 65_536;

/**
 * Runs `range` over the table's rows in ranges of rowid: DuckDB skips the row groups outside one, so
 * each statement reads a few MB whatever the table's size, and the event loop turns between them.
 * Answers false if `stop`, asked before each range, ended it short.
 */
async function eachRange(
  q: Queryable,
  table: string,
  stop: () => boolean,
  range: (first: number, end: number) => Promise<void>,
): Promise<boolean> {
  const [bounds] = await rows<{ last: number | null }>(
    q,
    `SELECT max(rowid)::DOUBLE AS last FROM ${table}`,
    [],
  );
  const last = bounds?.last ?? null;
  for (let first = 0; last !== null && first <= last; first += LOAD_ROWS) {
    if (stop()) return false;
    await range(first, first + LOAD_ROWS);
  }
  return true;
}

/**
 * Adds every value of `expr` over the project's rows of `table` to `into`. DuckDB hands each range of
 * rows as one JSON array: reading 650k event ids value by value through the driver took 1.0-1.6 s,
 * mostly making each string, one JSON.parse per range a third of it.
 */
function addKnown(
  q: Queryable,
  into: KnownIds,
  project: string,
  from: { table: string; expr: string; where?: string },
  stop: () => boolean = () => false,
): Promise<boolean> {
  return eachRange(q, from.table, stop, async (first, end) => {
    const [found] = await rows<{ ids: string | null }>(
      q,
      `SELECT to_json(list(${from.expr}))::VARCHAR AS ids FROM ${from.table}
        WHERE project_id = $1 AND rowid >= $2 AND rowid < $3 ${from.where ?? ''}`,
      [text(project), int(first), int(end)],
    );
    if (found?.ids)
      for (const id of JSON.parse(found.ids) as unknown[]) if (typeof id === 'string') into.add(id);
  });
}

/**
 * The project's callers' event ids: those stored with their hash (migration 12) as one numeric column
 * per range, no string made; rows stored before it by their text, as `addKnown` reads them.
 */
async function addCallerEventIds(
  q: Queryable,
  into: KnownIds,
  project: string,
  stop: () => boolean = () => false,
): Promise<boolean> {
  const hashed = await eachRange(q, 'events', stop, async (first, end) => {
    const hashes = await column<number>(
      q,
      `SELECT id_hash FROM events
        WHERE project_id = $1 AND rowid >= $2 AND rowid < $3 AND id_hash IS NOT NULL`,
      [text(project), int(first), int(end)],
    );
    for (const h of hashes) into.addHash(h);
  });
  if (!hashed) return false;
  const [older] = await rows<{ n: number }>(
    q,
    `SELECT count(*)::DOUBLE AS n FROM events
      WHERE project_id = $1 AND origin_event_id IS NULL AND id_hash IS NULL`,
    [text(project)],
  );
  if (!older?.n) return true;
  return addKnown(
    q,
    into,
    project,
    { table: 'events', expr: 'event_id', where: 'AND origin_event_id IS NULL AND id_hash IS NULL' },
    stop,
  );
}

async function knownFrom(
  q: Queryable,
  project: string,
  from: { table: string; expr: string; where?: string },
): Promise<KnownIds> {
  const known = new KnownIds();
  await addKnown(q, known, project, from);
  return known;
}

/** A project's first batch: hash filters of the ids its tables hold (events' deferred), and its intent rules. */
export async function loadProjectCache(q: Queryable, project: string): Promise<ProjectCache> {
  const known = {
    events: new EventIdFilter(),
    sessions: await knownFrom(q, project, { table: 'sessions', expr: 'session_id' }),
    conversations: await knownFrom(q, project, { table: 'conversations', expr: conversationKeySql() }),
    ids: await knownFrom(q, project, { table: 'user_ids', expr: 'id' }),
    devices: await knownFrom(q, project, { table: 'devices', expr: 'device_id' }),
    derivedKeys: await knownFrom(q, project, {
      table: 'sessions',
      expr: 'derived_key',
      where: 'AND derived_key IS NOT NULL',
    }),
  };
  return new ProjectCache(project, known, await loadIntentRules(q, project));
}

/** The events' filter for one request of the project, loading it once it is due (EventIdFilter). */
export function eventFilter(q: Queryable, cache: ProjectCache): Promise<KnownIds | null> {
  return cache.known.events.forRequest(async (into) => {
    await addCallerEventIds(q, into, cache.projectId);
  });
}

/** The events' filter loaded ahead of its requests, given up between ranges once `stop` says so. */
export function warmEventFilter(q: Queryable, cache: ProjectCache, stop: () => boolean): Promise<void> {
  return cache.known.events.warm((into) => addCallerEventIds(q, into, cache.projectId, stop));
}

type ConversationRow = {
  conversation_id: string;
  session_id: string;
  started: number;
  ended: number | null;
  properties: string | null;
};

/**
 * The sessions of some keys, matched on the plain column before the key expression: a semi-join on
 * session_id spares computing the key for every scanned row (see write-batch.ts's updateChanged).
 */
function sessionsOf(
  chunk: readonly string[],
  sessionOf: (key: ConversationKey) => string | undefined,
): string[] {
  // A chunk of rowsByKeys is a slice of the keys it was given.
  return [...new Set(chunk.flatMap((key) => sessionOf(key as ConversationKey) ?? []))];
}

const COUNTED: ReadonlyMap<string, CountedKind> = new Map([
  [EVENT_NAMES.conversationTurn, 'turn'],
  [EVENT_NAMES.conversationUsage, 'usage'],
  [EVENT_NAMES.conversationFunction, 'function'],
]);

/** An open conversation's totals are not stored: replay its stored turns, usage and function calls. */
async function replay(q: Queryable, project: string, conversations: ConversationState[]): Promise<void> {
  const byKey = new Map(conversations.map((c) => [keyOf(c), c]));
  const found = await rowsByKeys<{
    session_id: string;
    conversation_id: string;
    event: string;
    properties: string | null;
    ts: number;
  }>(q, [...byKey.keys()], (chunk) => ({
    sql: `SELECT session_id, conversation_id, event, properties::VARCHAR AS properties,
               epoch_ms(ts)::DOUBLE AS ts FROM events
             WHERE project_id = $1 AND session_id IN (SELECT unnest($3))
               AND ${conversationKeySql()} IN (SELECT unnest($2)) AND origin_event_id IS NULL
               AND event IN ('${[...COUNTED.keys()].join("', '")}')
             ORDER BY ts, rowid`,
    params: [text(project), texts(chunk), texts(sessionsOf(chunk, (key) => byKey.get(key)?.sessionId))],
  }));
  for (const r of found) {
    const c = byKey.get(conversationKey(r.session_id, r.conversation_id));
    const kind = COUNTED.get(r.event);
    if (!c || !kind) continue;
    accumulate(c, kind, r.properties ? (JSON.parse(r.properties) as Properties) : {}, r.ts);
    if (r.ts > c.lastEventAt) c.lastEventAt = r.ts;
  }
}

function conversationOf(r: ConversationRow): ConversationState {
  return {
    id: r.conversation_id,
    sessionId: r.session_id,
    startedAt: r.started,
    endedAt: r.ended,
    lastEventAt: r.ended ?? r.started,
    properties: r.properties ? (JSON.parse(r.properties) as Properties) : null,
    totals: emptyTotals(),
    utterances: [],
    labels: new Map(),
    stored: { startedAt: r.started, endedAt: r.ended, properties: r.properties },
    writing: null,
  };
}

const CONVERSATION_COLUMNS = `conversation_id, session_id, epoch_ms(started_at)::DOUBLE AS started,
  epoch_ms(ended_at)::DOUBLE AS ended, properties::VARCHAR AS properties`;

async function loadSessions(q: Queryable, cache: ProjectCache, ids: string[]): Promise<void> {
  const p = cache.projectId;
  const found = await rowsByKeys<{
    session_id: string;
    user_id: string;
    device_id: string | null;
    started: number;
    ended: number | null;
    last: number;
    attributes: string | null;
    provisional_end: string | null;
    derived_key: string | null;
  }>(q, ids, (chunk) => ({
    sql: `SELECT session_id, user_id, device_id, epoch_ms(started_at)::DOUBLE AS started,
            epoch_ms(ended_at)::DOUBLE AS ended, epoch_ms(last_event_at)::DOUBLE AS last, attributes::VARCHAR AS attributes,
            provisional_end, derived_key
            FROM sessions WHERE project_id = $1 AND session_id IN (SELECT unnest($2))`,
    params: [text(p), texts(chunk)],
  }));
  const sessions = new Map<string, SessionState>();
  for (const r of found) {
    sessions.set(r.session_id, {
      id: r.session_id,
      userId: r.user_id,
      deviceId: r.device_id,
      startedAt: r.started,
      endedAt: r.ended,
      lastEventAt: r.last,
      attributes: r.attributes ? (JSON.parse(r.attributes) as Traits) : null,
      provisionalEnd: r.provisional_end,
      derivedKey: r.derived_key,
      conversations: [],
      open: [],
      stored: {
        userId: r.user_id,
        deviceId: r.device_id,
        startedAt: r.started,
        endedAt: r.ended,
        lastEventAt: r.last,
        attributes: r.attributes,
        provisionalEnd: r.provisional_end,
      },
      writing: null,
    });
  }
  for (const id of ids) if (!sessions.has(id)) cache.absent.sessions.add(id);
  const conversations = await rowsByKeys<ConversationRow>(q, [...sessions.keys()], (chunk) => ({
    sql: `SELECT ${CONVERSATION_COLUMNS} FROM conversations
           WHERE project_id = $1 AND session_id IN (SELECT unnest($2)) ORDER BY started_at, conversation_id`,
    params: [text(p), texts(chunk)],
  }));
  const open: ConversationState[] = [];
  for (const r of conversations) {
    const s = sessions.get(r.session_id);
    if (!s) continue;
    s.conversations.push(r.conversation_id);
    if (r.ended === null && !cache.conversations.has(conversationKey(r.session_id, r.conversation_id))) {
      s.open.push(r.conversation_id);
      open.push(conversationOf(r));
    } else if (r.ended === null) s.open.push(r.conversation_id);
  }
  await replay(q, p, open);
  for (const c of open) cache.conversations.set(keyOf(c), c);
  for (const s of sessions.values()) cache.sessions.set(s.id, s);
}

async function loadConversations(
  q: Queryable,
  cache: ProjectCache,
  named: Map<ConversationKey, string>,
): Promise<void> {
  const keys = [...named.keys()];
  const found = await rowsByKeys<ConversationRow>(q, keys, (chunk) => ({
    sql: `SELECT ${CONVERSATION_COLUMNS} FROM conversations
           WHERE project_id = $1 AND session_id IN (SELECT unnest($3)) AND ${conversationKeySql()} IN (SELECT unnest($2))`,
    params: [text(cache.projectId), texts(chunk), texts(sessionsOf(chunk, (key) => named.get(key)))],
  }));
  const loaded = found.map(conversationOf);
  await replay(
    q,
    cache.projectId,
    loaded.filter((c) => c.endedAt === null),
  );
  for (const c of loaded) cache.conversations.set(keyOf(c), c);
  for (const key of keys) if (!cache.conversations.has(key)) cache.absent.conversations.add(key);
}

/**
 * Loads everything the batch names that the filters say may exist but memory does not hold, so that
 * planning is synchronous and exact. In steady state (new ids, or ids already in memory) no query runs.
 */
export async function prefetch(
  q: Queryable,
  cache: ProjectCache,
  events: readonly WireEvent[],
  history = false,
): Promise<void> {
  const sessionIds = new Set<string>(await derivedCandidates(q, cache, events));
  for (const e of events) {
    if (e.session_id !== undefined && cache.needsSession(e.session_id)) sessionIds.add(e.session_id);
  }
  if (sessionIds.size > 0) await loadSessions(q, cache, [...sessionIds]);
  const named = conversationsNamed(cache, events, history);
  if (named.size > 0) await loadConversations(q, cache, named);
  const ids: string[] = [];
  const devices: string[] = [];
  const users: string[] = [];
  const device = (d: string | null | undefined) => {
    if (d === null || d === undefined) return;
    // Even one in memory: loadIdentity loads its user again where a user route dropped it (an identify
    // on such a device was a 500, found by probing).
    devices.push(d);
    // Only a device without a user falls back to its anonymous user, so only then is that id needed.
    if (!cache.identity.devices.has(d)) ids.push(anonymousId(d));
  };
  // Every stored session the batch reaches: those it names, and the derived ones its events join or
  // reopen (a provisional end names the importer's derived id and carries no user). The planner reads
  // each one's user; another event of the batch naming that user cannot be relied on, since a failed
  // group clears the identity maps while untouched sessions stay cached (ProjectCache.forget).
  const { replays, reroute } = reopenPlan(cache, events, [], Date.now(), history);
  // A replay's sessions too, not only its name: the replay opens its target as the first one's user
  // (a 500 for good where that user was not loaded, found by split-run fuzzing).
  const reached = new Set<string>([
    ...reroute.values(),
    ...[...replays.values()].flatMap((r) => [r.target, ...r.sessions]),
  ]);
  for (const e of events) {
    if (e.user_id !== undefined) ids.push(e.user_id);
    if (e.kind === 'alias') ids.push(e.id, e.previous_id);
    device(e.device_id);
    if (e.session_id !== undefined) reached.add(e.session_id);
  }
  for (const id of reached) {
    const s = cache.sessions.get(id);
    if (s) {
      users.push(s.userId);
      device(s.deviceId);
    }
  }
  await loadIdentity(q, cache.projectId, cache.identity, { ids, devices, users });
  const plan = reopenPlan(cache, events, [], Date.now(), history);
  const replayed = replayedSessions(plan);
  await loadHistory(q, cache, replayed);
  const names = unloadedPlanNames(plan, cache, events);
  if (names.length > 0) {
    await loadSessions(q, cache, names);
    // Their users too, as for every session the batch reaches (a refusal may name the owner).
    const owners = names.flatMap((id) => cache.sessions.get(id)?.userId ?? []);
    if (owners.length > 0) await loadIdentity(q, cache.projectId, cache.identity, { users: owners });
  }
  // A replay plans its stored events again, and one naming a device links it (plan-session.ts).
  const historyDevices = replayed
    .flatMap((id) => cache.history.get(id) ?? [])
    .flatMap((r) => (r.device_id === null ? [] : [r.device_id]));
  if (historyDevices.length > 0)
    await loadIdentity(q, cache.projectId, cache.identity, { devices: historyDevices });
}

/**
 * The stored conversations the batch names that memory lacks (closed ones leave memory). A name is
 * looked up in the session the event names and, for an event of a derived session that joins or
 * reopens a stored one (reopen-plan.ts), in that one too: conversation ids are scoped to their session.
 */
function conversationsNamed(
  cache: ProjectCache,
  events: readonly WireEvent[],
  history: boolean,
): Map<ConversationKey, string> {
  const { replays, reroute } = reopenPlan(cache, events, [], Date.now(), history);
  const targets = new Map<number, string>(reroute);
  for (const r of replays.values()) for (const i of r.indices) targets.set(i, r.target);
  const named = new Map<ConversationKey, string>();
  events.forEach((e, i) => {
    if (!('conversation_id' in e) || e.conversation_id === undefined || e.session_id === undefined) return;
    for (const session of new Set([e.session_id, targets.get(i) ?? e.session_id])) {
      const key = conversationKey(session, e.conversation_id);
      if (cache.needsConversation(key)) named.set(key, session);
    }
  });
  return named;
}

/**
 * Stored derived sessions the batch's derived events may join (reopen-plan.ts): those of the same
 * keys within the gap of the batch's times, found in the cache's index. A key the index lacks is
 * loaded whole, once, if the project's filter says it may have sessions (a new key has none).
 */
async function derivedCandidates(
  q: Queryable,
  cache: ProjectCache,
  events: readonly WireEvent[],
): Promise<string[]> {
  const windows = new Map<string, { from: number; to: number }>();
  for (const e of events) {
    if (!('session_key' in e) || e.session_key === undefined || e.session_gap_ms === undefined) continue;
    if (e.timestamp === undefined) continue;
    const ts = Date.parse(e.timestamp);
    const w = windows.get(e.session_key);
    const from = ts - e.session_gap_ms;
    const to = ts + e.session_gap_ms;
    windows.set(e.session_key, w ? { from: Math.min(w.from, from), to: Math.max(w.to, to) } : { from, to });
  }
  const unknown: string[] = [];
  for (const key of windows.keys()) {
    if (cache.derived.has(key)) continue;
    if (cache.known.derivedKeys.has(key)) unknown.push(key);
    else cache.derived.load(key, []);
  }
  if (unknown.length > 0) {
    const found = await rowsByKeys<{ session_id: string; derived_key: string; start: number; last: number }>(
      q,
      unknown,
      (chunk) => ({
        sql: `SELECT session_id, derived_key, epoch_ms(started_at)::DOUBLE AS start,
                epoch_ms(last_event_at)::DOUBLE AS last
                FROM sessions WHERE project_id = $1 AND derived_key IN (SELECT unnest($2))`,
        params: [text(cache.projectId), texts(chunk)],
      }),
    );
    const byKey = new Map<string, Array<{ id: string; start: number; last: number }>>();
    for (const r of found) {
      const list = byKey.get(r.derived_key) ?? [];
      list.push({ id: r.session_id, start: r.start, last: r.last });
      byKey.set(r.derived_key, list);
    }
    for (const key of unknown) cache.derived.load(key, byKey.get(key) ?? []);
  }
  const ids: string[] = [];
  for (const [key, w] of windows)
    for (const span of cache.derived.near(key, w.from, w.to))
      if (!cache.sessions.has(span.id)) ids.push(span.id);
  return ids;
}
