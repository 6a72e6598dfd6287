import type { Issue } from '../../shared/errors.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import { IdentityChanges, type IdentityMaps } from '../identity/model.js';
import { seenAt } from '../identity/rules.js';
import { type ConversationKey, conversationKey, keyOf } from './conversation-key.js';
import { planConversationEvent } from './plan-conversation.js';
import { planSessionEvent } from './plan-session.js';
import type { ProjectCache } from './project-cache.js';
import { reopenPlan } from './reopen-plan.js';
import { replanSession } from './replan.js';
import { type EventRow, newEventId } from './rows.js';
import { type ConversationState, type SessionState, touchTime } from './state.js';
import type { Wiped } from './write-batch.js';

/**
 * `unknown_previous`: an alias whose previous_id no user has. A per-event route answers it 404, as
 * `/user/alias` does (decisions §3); in a queue batch it is a 409 naming `[index].previous_id`, since
 * only 400 and 409 bodies carry the issues that say which event.
 */
export type ConflictCode = 'conflict' | 'session_ended' | 'conversation_closed' | 'unknown_previous';

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
  readonly touched = { sessions: new Set<string>(), conversations: new Set<ConversationKey>() };
  readonly invalid: Issue[] = [];
  readonly conflicts: Array<Issue & { code: ConflictCode }> = [];
  /** Sessions whose stored rows this request deletes before writing (reopened: see replan.ts). */
  readonly wiped: Wiped[] = [];
  accepted = 0;
  duplicates = 0;
  /**
   * A replay (replan.ts) is planning: a session's times span its whole segment before its events are
   * planned in time order, and that segment's own rules judge an end before stored events.
   */
  replaying = false;
  private owner = 0;
  private duplicate = false;

  constructor(
    readonly cache: ProjectCache,
    readonly receivedAt: number,
    /** Shared by the requests of one transaction, whose identity rows are written together. */
    readonly ch: IdentityChanges = new IdentityChanges(),
    /** The request is history (IngestOptions.history): late events go before final ends. */
    readonly history = false,
  ) {}

  get maps(): IdentityMaps {
    return this.cache.identity;
  }

  /** `earlier`: sessions earlier requests of the same transaction touched (they cannot be reopened here). */
  plan(
    events: readonly WireEvent[],
    duplicate: readonly boolean[],
    earlier: ReadonlySet<string> = new Set(),
  ): void {
    const { replays, reroute } = reopenPlan(this.cache, events, duplicate, this.receivedAt, this.history);
    const planned = new Set<number>();
    events.forEach((e, index) => {
      if (duplicate[index]) {
        this.duplicates++;
        return;
      }
      if (planned.has(index)) return;
      const replay = replays.get(index);
      if (replay) {
        const touched = replay.sessions.find((id) => earlier.has(id));
        if (touched !== undefined)
          throw new Error(
            `session "${touched}" is reopened after an earlier request of this group touched it`,
          );
        for (const i of replay.indices) planned.add(i);
        this.replaying = true;
        try {
          replanSession(this, replay, events);
        } finally {
          this.replaying = false;
        }
        return;
      }
      const ts = e.timestamp === undefined ? this.receivedAt : Date.parse(e.timestamp);
      const target = reroute.get(index);
      if (this.namedByAnother(e, target ?? e.session_id, index)) return;
      const event = target === undefined ? e : ({ ...e, session_id: target } as WireEvent);
      this.planOne(event, { index, ts, eventId: e.event_id ?? newEventId(this.receivedAt) });
    });
  }

  /**
   * An event of a derived session (the import's `session_key`) whose name another session has (a
   * caller's own id of the derived form, or a session of another key): 409. It joined that session,
   * or stored a second row of its name when a replay renamed it (found by probing).
   */
  private namedByAnother(e: WireEvent, id: string | undefined, index: number): boolean {
    const key = 'session_key' in e ? e.session_key : undefined;
    if (key === undefined || id === undefined) return false;
    const s = this.cache.session(id);
    if (s === undefined || s.derivedKey === key) return false;
    this.conflict(
      index,
      'session_id',
      `the session these events make is named "${id}", which another session has; send its events with a session_id`,
    );
    return true;
  }

  /** One event of the request, counted as accepted (or as a duplicate, when its plan says so). */
  planOne(e: WireEvent, x: EventCtx): void {
    this.owner = x.index;
    // The id the service assigns too: a caller re-sending the event under it sends a duplicate.
    this.cache.known.events.add(x.eventId);
    const handled = planSessionEvent(this, e, x) || planConversationEvent(this, e, x);
    if (!handled) throw new Error(`no plan for event kind ${e.kind}`);
    if (this.duplicate) this.duplicates++;
    else this.accepted++;
    this.duplicate = false;
  }

  /**
   * Rows planned from here on belong to the request's event `index`; a stored event that a replay
   * plans again (replan.ts) belongs to none, so no per-event route answers with it.
   */
  ownRows(index: number | undefined): void {
    this.owner = index ?? STORED;
  }

  /** The event asks for nothing new (e.g. an import's end of a session already ended). */
  markDuplicate(): void {
    this.duplicate = true;
  }

  /** Deletes a reopened session's stored rows (identity rows aside) when this request is written. */
  wipe(s: SessionState, into: string): void {
    const to = Math.max(s.lastEventAt, s.endedAt ?? s.lastEventAt);
    this.wiped.push({ id: s.id, into, from: s.startedAt, to });
    for (const id of s.conversations) {
      const key = conversationKey(s.id, id);
      this.cache.conversations.delete(key);
      this.cache.absent.conversations.add(key);
      this.touched.conversations.delete(key);
    }
    this.cache.sessions.delete(s.id);
    this.cache.absent.sessions.add(s.id);
    this.cache.history.delete(s.id);
    this.cache.derived.remove(s.derivedKey, s.id);
  }

  /** Callers pass a fresh literal each: it becomes the row itself (a copy per row was ~2.5 µs of CPU). */
  row(row: Omit<EventRow, 'owner'>): void {
    const owned = row as EventRow;
    owned.owner = this.owner;
    this.slots.push(owned);
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
    this.touched.conversations.add(keyOf(c));
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
      owner: this.owner,
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

/** The owner of a replayed stored event's rows (Planner.ownRows). */
export const STORED = -1;
