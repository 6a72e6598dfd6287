import type { WireEvent, WireEventOf } from '../../shared/event-bodies.js';
import { EVENT_NAMES } from '../../shared/event-names.js';
import type { Properties, PropertyValue } from '../../shared/primitives.js';
import { clientAnalysisProperties } from './client-analysis.js';
import { conversationKey } from './conversation-key.js';
import { checkUser, sessionFor } from './plan-session.js';
import { type EventCtx, iso, type Planner } from './planner.js';
import { generatedId } from './rows.js';
import { type ConversationState, mergeProps, newConversation, type SessionState } from './state.js';
import { accumulate, costOf } from './totals.js';

type ConversationEvent = WireEventOf<
  'turn' | 'usage' | 'function' | 'custom' | 'start_conversation' | 'end_conversation'
>;

/**
 * `<session_id>/1`, `/2`, ...: the first number no conversation of this session has. The session's
 * list holds every conversation it has (stored ones are loaded with it), so the name depends only on
 * the session's history, never on what a failed transaction or a reopened session left in memory.
 */
function defaultConversationId(p: Planner, s: SessionState): string {
  for (let n = 1; ; n++) {
    const id = `${s.id}/${n}`;
    if (!s.conversations.includes(id) && !p.cache.conversations.has(conversationKey(s.id, id))) return id;
  }
}

function start(p: Planner, s: SessionState, id: string, x: EventCtx, generated: boolean): ConversationState {
  const c = newConversation(id, s.id, x.ts);
  const key = conversationKey(s.id, id);
  p.cache.conversations.set(key, c);
  p.cache.known.conversations.add(key);
  p.cache.absent.conversations.delete(key);
  s.conversations.push(id);
  s.open.push(id);
  p.touchConversation(c, x.ts);
  if (generated) {
    p.row({
      eventId: generatedId(x.eventId, `conversation-started:${id}`),
      event: EVENT_NAMES.conversationStarted,
      type: 'track',
      ts: x.ts,
      userId: p.userOf(s),
      sessionId: s.id,
      conversationId: id,
      properties: null,
      originEventId: x.eventId,
    });
  }
  return c;
}

/**
 * The conversation an event belongs to (decisions §4). A named one is this session's (ids are scoped
 * to their session: the same id elsewhere is another conversation) and must be open; an unknown name
 * opens it (`Conversation Started` recorded unless the event is the explicit start).
 * Unnamed: the session's single open conversation; none open: a new `<session_id>/n`; several: 400
 * naming them. `optional` (custom events) leaves an unnamed event outside any conversation.
 */
function conversationFor(
  p: Planner,
  s: SessionState,
  e: ConversationEvent,
  x: EventCtx,
  mode: 'default' | 'optional' | 'new',
): ConversationState | null | undefined {
  const named = e.conversation_id;
  if (named !== undefined) {
    const c = p.cache.conversation(s.id, named);
    if (!c) return start(p, s, named, x, mode !== 'new');
    if (c.endedAt !== null) {
      p.conflict(
        x.index,
        'conversation_id',
        `conversation "${named}" was closed at ${iso(c.endedAt)}`,
        'conversation_closed',
      );
    } else if (mode === 'new') {
      p.conflict(
        x.index,
        'conversation_id',
        `conversation "${named}" was already started at ${iso(c.startedAt)}`,
      );
    } else {
      p.touchConversation(c, x.ts);
      return c;
    }
    return undefined;
  }
  if (mode === 'optional') return null;
  if (mode === 'new' || s.open.length === 0)
    return start(p, s, defaultConversationId(p, s), x, mode !== 'new');
  if (s.open.length > 1) {
    const open = s.open.map((id) => `"${id}"`).join(', ');
    p.invalidInput(
      x.index,
      'conversation_id',
      `session "${s.id}" has ${s.open.length} open conversations (${open}); name one`,
    );
    return undefined;
  }
  const c = p.cache.conversation(s.id, s.open[0]!);
  if (c) p.touchConversation(c, x.ts);
  return c;
}

/**
 * A cost the service priced from tokens is stored on the event too, so charts can sum `cost`. Set in
 * place: the properties are the ingest core's own copy (parsed from the request, or cloned across
 * threads), and a copy by spread cost 6 µs an event, 5% of an import's time on the service thread,
 * since cloned objects take V8's slow path.
 */
function withPricedCost(props: Record<string, PropertyValue>): Record<string, PropertyValue> {
  if (props.cost !== undefined) return props;
  const priced = costOf(props);
  if (priced) {
    props.cost = priced.cost;
    props.cost_known = priced.known;
  }
  return props;
}

/** An edge's attributes, then what the app analysed (an end's), then its properties, which win. */
function edgeProperties(
  e: { properties?: Properties | undefined; attributes?: Properties | undefined },
  analysed?: Properties,
) {
  const base = mergeProps<Properties>(mergeProps<Properties>(null, e.attributes), analysed);
  return mergeProps<Properties>(base, e.properties);
}

/**
 * An end before its conversation started is refused, as a session's is (plan-session.ts `planEnd`):
 * planned, it moved the conversation's start back to the end, after its Conversation Started row.
 * So is one before the conversation's last event outside a replay, whose own rules judge that.
 */
function endsBeforeEvents(p: Planner, s: SessionState, named: string | undefined, x: EventCtx): boolean {
  const id = named ?? (s.open.length === 1 ? s.open[0] : undefined);
  const c = id === undefined ? undefined : p.cache.conversation(s.id, id);
  if (!c || c.endedAt !== null) return false;
  if (x.ts < c.startedAt) {
    p.conflict(
      x.index,
      'timestamp',
      `conversation "${c.id}" started at ${iso(c.startedAt)}: it cannot end before that, at ${iso(x.ts)}`,
    );
    return true;
  }
  if (x.ts >= c.lastEventAt || p.replaying) return false;
  p.conflict(
    x.index,
    'timestamp',
    `conversation "${c.id}" has events until ${iso(c.lastEventAt)}: it cannot end before them, at ${iso(x.ts)}`,
  );
  return true;
}

/** Plans the conversation-level kinds and custom events; false for the session-level ones. */
export function planConversationEvent(p: Planner, e: WireEvent, x: EventCtx): boolean {
  if (e.kind === 'identify' || e.kind === 'alias' || e.kind === 'start_session' || e.kind === 'end_session') {
    return false;
  }
  const s = sessionFor(p, e, x);
  if (!s || !checkUser(p, s, e.user_id, x, e.device_id)) return true;
  if (e.kind === 'end_conversation' && e.conversation_id === undefined && s.open.length === 0) {
    p.conflict(x.index, 'conversation_id', `session "${s.id}" has no open conversation to end`);
    return true;
  }
  if (e.kind === 'end_conversation' && endsBeforeEvents(p, s, e.conversation_id, x)) return true;
  const mode = e.kind === 'custom' ? 'optional' : e.kind === 'start_conversation' ? 'new' : 'default';
  const c = conversationFor(p, s, e, x, mode);
  if (c === undefined) return true;
  let properties: Record<string, PropertyValue> | null = e.properties ?? null;
  if (e.kind === 'start_conversation') properties = edgeProperties(e);
  if (e.kind === 'end_conversation') properties = edgeProperties(e, clientAnalysisProperties(e));
  if (c && (e.kind === 'turn' || e.kind === 'usage' || e.kind === 'function')) {
    properties = e.kind === 'function' ? e.properties : withPricedCost(e.properties);
    accumulate(c, e.kind, properties, x.ts);
  }
  if (c && e.kind === 'start_conversation') c.properties = properties;
  p.row({
    eventId: x.eventId,
    event: e.event,
    type: 'track',
    ts: x.ts,
    userId: p.userOf(s),
    sessionId: s.id,
    conversationId: c?.id ?? null,
    properties,
    originEventId: null,
    ...(e.device_id === undefined ? {} : { deviceId: e.device_id }),
  });
  if (c && e.kind === 'end_conversation') {
    c.properties = mergeProps(c.properties, properties ?? undefined);
    p.close(s, c, x);
  }
  return true;
}
