import type { Properties, PropertyValue, Traits } from '../../shared/primitives.js';

/**
 * In-memory state of open sessions and conversations (spec part 3), as the planner mutates it.
 * `stored` is the row as the database holds it (null: not inserted yet), `writing` the row as the
 * transaction in flight wrote it, which becomes `stored` when that transaction commits. They are
 * snapshots, not the live fields: with pipelining, the next group is planned (and mutates the live
 * fields) before this one commits. A write compares the live fields with `stored`, so a touched row
 * whose columns did not change (a turn changes none of its conversation's) costs no UPDATE, and the
 * UPDATE finds rows by the started_at the database really has.
 */
export interface SessionState {
  id: string;
  /** The session's user; resolve through identity (a merge may have moved it). */
  userId: string;
  deviceId: string | null;
  /** Epoch ms. */
  startedAt: number;
  endedAt: number | null;
  lastEventAt: number;
  attributes: Traits | null;
  /** The id of the Session Ended row of an end the importer added (later history reopens it). */
  provisionalEnd: string | null;
  /** Whose activity a derived session is (the import extension's session_key), else null. */
  derivedKey: string | null;
  /** Every conversation of the session in order of start, closed ones included (for `<session>/n`). */
  conversations: string[];
  /** The open ones, in order of start. */
  open: string[];
  stored: SessionRow | null;
  writing: SessionRow | null;
}

/** A sessions row's mutable columns; times in epoch ms, `userId` canonical, attributes as JSON text. */
export interface SessionRow {
  userId: string;
  deviceId: string | null;
  startedAt: number;
  endedAt: number | null;
  lastEventAt: number;
  attributes: string | null;
  provisionalEnd: string | null;
}

/** A conversations row's mutable columns; properties as JSON text. */
export interface ConversationRow {
  startedAt: number;
  endedAt: number | null;
  properties: string | null;
}

export interface Utterance {
  text: string;
  ts: number;
}

/** What the summary of decisions §5 counts, accumulated as events arrive. */
export interface ConversationTotals {
  turns: number;
  cost: number;
  /** False once any token usage named a model without a price. */
  costKnown: boolean;
  promptTokens: number;
  completionTokens: number;
  functionCalls: number;
  functionErrors: number;
}

export interface ConversationState {
  id: string;
  sessionId: string;
  startedAt: number;
  endedAt: number | null;
  lastEventAt: number;
  /** Given at start, merged with those given at end. */
  properties: Properties | null;
  totals: ConversationTotals;
  /** The user's side of each turn, for the analyser (sentiment, intent rules). */
  utterances: Utterance[];
  /** Intents labelled on turns (`intent` property), first occurrence first, with their attributes. */
  labels: Map<string, Record<string, PropertyValue>>;
  stored: ConversationRow | null;
  writing: ConversationRow | null;
}

export function emptyTotals(): ConversationTotals {
  return {
    turns: 0,
    cost: 0,
    costKnown: true,
    promptTokens: 0,
    completionTokens: 0,
    functionCalls: 0,
    functionErrors: 0,
  };
}

export function newSession(id: string, userId: string, deviceId: string | null, ts: number): SessionState {
  return {
    id,
    userId,
    deviceId,
    startedAt: ts,
    endedAt: null,
    lastEventAt: ts,
    attributes: null,
    provisionalEnd: null,
    derivedKey: null,
    conversations: [],
    open: [],
    stored: null,
    writing: null,
  };
}

export function newConversation(id: string, sessionId: string, ts: number): ConversationState {
  return {
    id,
    sessionId,
    startedAt: ts,
    endedAt: null,
    lastEventAt: ts,
    properties: null,
    totals: emptyTotals(),
    utterances: [],
    labels: new Map(),
    stored: null,
    writing: null,
  };
}

/** Imported history may arrive out of order: a session spans its earliest to its latest event. */
export function touchTime(entity: { startedAt: number; lastEventAt: number }, ts: number): void {
  if (ts < entity.startedAt) entity.startedAt = ts;
  if (ts > entity.lastEventAt) entity.lastEventAt = ts;
}

export function mergeProps<T extends Record<string, unknown>>(
  base: T | null,
  extra: T | undefined,
): T | null {
  if (!extra || Object.keys(extra).length === 0) return base;
  return { ...base, ...extra } as T;
}
