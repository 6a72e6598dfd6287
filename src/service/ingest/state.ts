import type { Properties, PropertyValue, Traits } from '../../shared/primitives.js';

/**
 * In-memory state of open sessions and conversations (spec part 3), as the planner mutates it.
 * `stored` says whether the row is already in the database (and with which started_at, which lets
 * the batched UPDATE prune row groups by zone map); rows not stored yet are inserted with their final
 * values at the end of the batch.
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
  /** Every conversation of the session in order of start, closed ones included (for `<session>/n`). */
  conversations: string[];
  /** The open ones, in order of start. */
  open: string[];
  stored: { startedAt: number } | null;
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
  stored: { startedAt: number } | null;
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
    conversations: [],
    open: [],
    stored: null,
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
