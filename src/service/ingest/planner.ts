import type { Issue } from '../../shared/errors.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import { IdentityChanges, type IdentityMaps } from '../identity/model.js';
import { seenAt } from '../identity/rules.js';
import { planConversationEvent } from './plan-conversation.js';
import { planSessionEvent } from './plan-session.js';
import type { ProjectCache } from './project-cache.js';
import { type EventRow, newEventId } from './rows.js';
import { type ConversationState, type SessionState, touchTime } from './state.js';

export type ConflictCode = 'conflict' | 'session_ended' | 'conversation_closed';

/** The event being planned: its index in the request, its time and its (possibly generated) id. */
export interface EventCtx {
  index: number;
  ts: number;
  eventId: string;
}

/** A conversation this batch closed: analysed after planning, its events land where the slot is. */
export interface PendingClose {
  conversation: ConversationState;
  session: SessionState;
  userId: string;
  origin: string;
  ts: number;
  owner: number;
}

export type Slot = EventRow | { close: PendingClose };

/**
 * Turns a validated batch into rows and state changes, event by event, against the project cache:
 * the state machine of spec part 3 with the rules of decisions §4. Synchronous and free of I/O (the
 * cache was loaded for this batch beforehand), so the whole batch is judged before anything is
 * written. It mutates the cache in place; the caller forgets what it touched if the batch fails.
 */
export class Planner {
  readonly slots: Slot[] = [];
  readonly closes: PendingClose[] = [];
  readonly touched = { sessions: new Set<string>(), conversations: new Set<string>() };
  readonly invalid: Issue[] = [];
  readonly conflicts: Array<Issue & { code: ConflictCode }> = [];
  accepted = 0;
  duplicates = 0;
  private owner = 0;

  constructor(
    readonly cache: ProjectCache,
    readonly receivedAt: number,
    /** Shared by the requests of one transaction, whose identity rows are written together. */
    readonly ch: IdentityChanges = new IdentityChanges(),
  ) {}

  get maps(): IdentityMaps {
    return this.cache.identity;
  }

  plan(events: readonly WireEvent[], duplicate: readonly boolean[]): void {
    events.forEach((e, index) => {
      if (duplicate[index]) {
        this.duplicates++;
        return;
      }
      this.owner = index;
      const ts = e.timestamp === undefined ? this.receivedAt : Date.parse(e.timestamp);
      const x: EventCtx = { index, ts, eventId: e.event_id ?? newEventId(this.receivedAt) };
      if (e.event_id !== undefined) this.cache.known.events.add(e.event_id);
      const handled = planSessionEvent(this, e, x) || planConversationEvent(this, e, x);
      if (!handled) throw new Error(`no plan for event kind ${e.kind}`);
      this.accepted++;
    });
  }

  row(row: Omit<EventRow, 'owner'>): void {
    this.slots.push({ ...row, owner: this.owner });
  }

  /** The session's current (canonical) user, which rows record as events.user_id. */
  userOf(s: SessionState): string {
    return this.maps.canonical(s.userId);
  }

  touchSession(s: SessionState, ts: number): void {
    touchTime(s, ts);
    this.touched.sessions.add(s.id);
    seenAt(this.maps, this.ch, this.userOf(s), ts);
  }

  touchConversation(c: ConversationState, ts: number): void {
    touchTime(c, ts);
    this.touched.conversations.add(c.id);
  }

  close(s: SessionState, c: ConversationState, x: EventCtx): void {
    c.endedAt = x.ts;
    this.touchConversation(c, x.ts);
    s.open = s.open.filter((id) => id !== c.id);
    const pending = {
      conversation: c,
      session: s,
      userId: this.userOf(s),
      origin: x.eventId,
      ts: x.ts,
      owner: x.index,
    };
    this.closes.push(pending);
    this.slots.push({ close: pending });
  }

  invalidInput(index: number, field: string, message: string): void {
    this.invalid.push({ path: `[${index}].${field}`, message });
  }

  conflict(index: number, field: string, message: string, code: ConflictCode = 'conflict'): void {
    this.conflicts.push({ path: `[${index}].${field}`, message, code });
  }
}

export const iso = (ms: number): string => new Date(ms).toISOString();
