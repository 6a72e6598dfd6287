import { derivedSessionId } from '../shared/derived-session.js';
import { EVENT_NAMES } from '../shared/event-names.js';
import { conversationEndEventId, endEventId, eventIdFor } from './event-id.js';
import { GROUP, type Staged, sameRecord } from './staging.js';
import { toIso } from './timestamps.js';
import type { OutEvent, SourceRef, WireJson } from './types.js';

export interface SessionizerOptions {
  /** Inactivity that ends a derived session, in ms (`--session-gap`). */
  gapMs: number;
  /** `--no-end`: never add an end_session. */
  noEnd: boolean;
  /** `--keep-duplicates`: exact duplicate records stay several events (numbered ids). */
  keepDuplicates: boolean;
  /**
   * The service's import extensions (our own service has them, the hosted one does not): ends the
   * import adds are provisional (later history reopens the session), and derived sessions carry
   * their key and gap so the service can join them with stored sessions of the same key.
   */
  extensions: { provisionalEnds: boolean; derivedSessions: boolean };
}

interface OpenSession {
  id: string;
  /** The user/device key of a derived session. */
  key: string | undefined;
  /** The sorted run's group of its records (staging.ts). */
  group: string;
  /** Where its events are sent: `laneOfSession`. */
  lane: string;
  last: number | null;
  source: SourceRef;
  /** Index of the session's first record in the sorted run: checkpoints start at such an index. */
  seq: number;
  /** The data ended it itself (an end_session record): nothing is added. */
  ended: boolean;
  /**
   * Its conversations named by id, with the time of each one's last record (null: none has one), and
   * `ended` those the data ends itself: where ends are final, the import ends the others (cli.md).
   */
  conversations: Map<string, { last: number | null; ended: boolean }>;
  /** Default conversations the import named (`<session>/1`, …), where the service will not. */
  defaults: number;
}

/** The events that belong to a conversation (decisions §4's default conversation rule). */
const IN_CONVERSATION: ReadonlySet<unknown> = new Set([
  EVENT_NAMES.conversationTurn,
  EVENT_NAMES.conversationUsage,
  EVENT_NAMES.conversationFunction,
]);

/**
 * The lane of a session opened by this record: its device's, if it names one, so every session on a
 * device is sent in the run's order. By session, the claims of a device (a session of a user on it)
 * and the sessions of its anonymous user raced across lanes: which user the anonymous history merged
 * into depended on --concurrency and timing (found by probing). Else the session's own group.
 */
function laneOfSession(s: Staged): string {
  const device = s.event.device_id;
  return typeof device === 'string' && device !== '' ? `device:${device}` : s.g;
}

/** The lane of every identify and alias record (delivery.ts), so they are stored in time order. */
const IDENTITY_LANE = 'identity';

/**
 * Places the records of a sorted run (see staging.ts) in sessions and adds their ends. The input is
 * grouped, so a session is complete when its group (or, for derived sessions, its gap) is passed:
 * only one session is ever open, and every decision depends on the set of records, not their order.
 *
 * - Records naming a session belong to it; the session ends after its last record in time.
 * - A user's or device's records without one form sessions split by the gap (or by an end_session
 *   record); each is named by `derivedSessionId(key, start)`.
 * - Conversation ids are left to our service where the data has none (its default conversation rule
 *   is the derivation cli.md describes, and it sees the whole stored session). The hosted service's
 *   schemas require one on a turn, usage or function event, so for it the import applies that rule
 *   within the session it sends (`defaultConversation`).
 * - Exact duplicates (same group, time and content) are one record unless kept.
 */
export class Sessionizer {
  private current: OpenSession | undefined;
  private previous: Staged | undefined;
  private occurrence = 0;
  /**
   * Ends of a session (or of a conversation) stated in the data before any other record of what
   * they end, held until that record is sent. Sent in time order they opened and ended an empty
   * session (or conversation) and the service refused every real record after them, where runs
   * split the other way refused the end (README: "an end dated before its session started ... is
   * refused"; found by probing). Sent after that record, the service refuses them, as it does
   * across runs; with nothing else of their session in the run, they go as they are.
   */
  private held: Array<{ s: Staged; index: number; conversation: string | undefined }> = [];
  /** Conversations of the open session that a record other than a held end has named. */
  private seen = new Set<string>();
  /** A record of the open session other than a held end has been sent. */
  private sentOther = false;

  constructor(
    private readonly options: SessionizerOptions,
    private readonly emit: (e: OutEvent) => void,
    private readonly onDuplicate: (s: Staged) => void = () => undefined,
  ) {}

  /** Where the open session starts in the sorted run (a checkpoint may not pass it). */
  get openSeq(): number | undefined {
    return this.current?.seq;
  }

  /** The record at `index` of the sorted run. */
  add(s: Staged, index: number): void {
    if (this.previous && sameRecord(this.previous, s)) {
      if (!this.options.keepDuplicates) {
        this.onDuplicate(s);
        return;
      }
      this.occurrence++;
    } else this.occurrence = 0;
    this.previous = s;
    const group = s.g[0];
    if (group === GROUP.identity) {
      this.close();
      // One lane, in time order: an alias may name an id only an earlier alias gave (a → b → c),
      // and lanes by id sent c ← b beside b ← a, so it could arrive first and be refused.
      this.send(s, index, IDENTITY_LANE);
      return;
    }
    const session = this.sessionFor(s, index);
    if (!this.options.extensions.provisionalEnds) this.defaultConversation(s, session);
    this.noteConversation(s, session);
    const endsSession = s.kind === 'end_session' || s.event.type === 'end_session';
    if (this.holds(s, session, endsSession, index)) return;
    if (endsSession) session.ended = true;
    if (s.ms !== null && (session.last === null || s.ms >= session.last)) {
      session.last = s.ms;
      session.source = s.source;
    }
    const e = s.event;
    e.session_id = session.id;
    if (session.key !== undefined && this.options.extensions.derivedSessions && s.ms !== null) {
      e.session_key = session.key;
      e.session_gap_ms = this.options.gapMs;
    }
    this.send(s, session.seq, session.lane);
    this.releaseFor(s);
  }

  /**
   * decisions §4 for a service that does not apply it (the hosted one): a turn, usage or function
   * event without a conversation id is the session's single open conversation's, or, none open, a
   * new `<session>/1`, `/2`, …; with several open it is sent without one, and refused naming them.
   */
  private defaultConversation(s: Staged, session: OpenSession): void {
    const e = s.event;
    if (e.conversation_id !== undefined || e.type !== 'track' || !IN_CONVERSATION.has(e.event)) return;
    const open = [...session.conversations].filter(([, c]) => !c.ended);
    if (open.length > 1) return;
    if (open[0] !== undefined) {
      e.conversation_id = open[0][0];
      return;
    }
    let id: string;
    do id = `${session.id}/${++session.defaults}`;
    while (session.conversations.has(id));
    e.conversation_id = id;
  }

  private noteConversation(s: Staged, session: OpenSession): void {
    const id = s.event.conversation_id;
    // Tracked under --no-end too: the default conversation rule reads which are open.
    if (typeof id !== 'string' || this.options.extensions.provisionalEnds) return;
    const c = session.conversations.get(id) ?? { last: null, ended: false };
    if (s.kind === 'end_conversation' || s.event.event === EVENT_NAMES.conversationEnded) c.ended = true;
    else if (s.ms !== null && (c.last === null || s.ms > c.last)) c.last = s.ms;
    session.conversations.set(id, c);
  }

  /**
   * Where an end is final (a service without our extensions: the hosted one), an end_session closes
   * every open conversation at its own time (decisions §4), so a conversation over long before its
   * session's last record got the session's duration (found by probing: 340 s for 156 s). Each one
   * the data does not end is ended after its last record, at that record's time (cli.md). Our own
   * service ends them there itself when it closes the session, and a provisional end keeps them open
   * to later runs.
   */
  private endConversations(s: OpenSession): void {
    const open = [...s.conversations].filter(([, c]) => !c.ended);
    open.sort(([a, x], [b, y]) => (x.last ?? 0) - (y.last ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
    for (const [conversation, c] of open) {
      this.emit({
        event: {
          type: 'track',
          event: EVENT_NAMES.conversationEnded,
          event_id: conversationEndEventId(s.id, conversation),
          timestamp: c.last === null ? undefined : toIso(c.last),
          session_id: s.id,
          conversation_id: conversation,
        },
        seq: s.seq,
        laneKey: s.lane,
        source: s.source,
        raw: undefined,
        synthesized: true,
      });
    }
  }

  /** An end of an explicit session held back (see `held`): before anything else of what it ends. */
  private holds(s: Staged, session: OpenSession, endsSession: boolean, index: number): boolean {
    if (s.g[0] !== GROUP.session) return false;
    const conversation = typeof s.event.conversation_id === 'string' ? s.event.conversation_id : undefined;
    const endsConversation = s.kind === 'end_conversation' && conversation !== undefined;
    if (!endsSession && !endsConversation) return false;
    const first = endsSession ? !this.sentOther : conversation !== undefined && !this.seen.has(conversation);
    if (!first) {
      // A session's end sent: the conversation ends still held go before it (it closes them all).
      if (endsSession) this.releaseConversations(session);
      return false;
    }
    this.held.push({ s, index, conversation: endsSession ? undefined : conversation });
    return true;
  }

  private releaseConversations(session: OpenSession): void {
    const conversations = this.held.filter((h) => h.conversation !== undefined);
    if (conversations.length === 0) return;
    this.held = this.held.filter((h) => h.conversation === undefined);
    for (const h of conversations) this.send(h.s, session.seq, session.lane);
  }

  /** After a record is sent: the held ends it follows (it is of their session or conversation). */
  private releaseFor(s: Staged): void {
    if (s.g[0] !== GROUP.session) return;
    this.sentOther = true;
    const conversation = typeof s.event.conversation_id === 'string' ? s.event.conversation_id : undefined;
    if (conversation !== undefined) this.seen.add(conversation);
    if (this.held.length === 0) return;
    const due = this.held.filter((h) => h.conversation === undefined || h.conversation === conversation);
    if (due.length === 0) return;
    this.held = this.held.filter((h) => !due.includes(h));
    // Dated before what they end began, they are refused (409): they end nothing.
    for (const h of due) this.send(h.s, this.current?.seq ?? h.index, this.current?.lane ?? h.s.g);
  }

  /** The session's group is passed: ends still held had nothing else of theirs in the run. */
  private releaseAll(session: OpenSession): void {
    const rest = this.held;
    this.held = [];
    this.seen.clear();
    this.sentOther = false;
    for (const h of rest) {
      if (h.conversation === undefined) session.ended = true;
      this.send(h.s, session.seq, session.lane);
    }
  }

  /** End of the run: the open session ends. */
  finish(): void {
    this.close();
  }

  private sessionFor(s: Staged, index: number): OpenSession {
    const open = this.current;
    if (open && open.group === s.g) {
      if (s.g[0] !== GROUP.derived) return open;
      const quiet =
        s.ms !== null && open.last !== null ? s.ms - open.last > this.options.gapMs : s.ms !== open.last;
      if (!open.ended && !quiet) return open;
    }
    this.close();
    const derived = s.g[0] === GROUP.derived ? s.g.slice(1) : undefined;
    let id: string;
    if (s.g[0] === GROUP.session) id = s.g.slice(1);
    else if (derived !== undefined) id = derivedSessionId(derived, s.ms);
    else id = `s_${s.h.slice(0, 22)}`;
    this.current = {
      id,
      key: derived,
      group: s.g,
      lane: laneOfSession(s),
      last: s.ms,
      source: s.source,
      seq: index,
      ended: false,
      conversations: new Map(),
      defaults: 0,
    };
    return this.current;
  }

  private close(): void {
    const s = this.current;
    this.current = undefined;
    if (s) this.releaseAll(s);
    if (!s || s.ended || this.options.noEnd) return;
    this.endConversations(s);
    const { provisionalEnds, derivedSessions } = this.options.extensions;
    const end: WireJson = {
      type: 'end_session',
      event_id: endEventId(s.id),
      timestamp: s.last === null ? undefined : toIso(s.last),
      session_id: s.id,
    };
    if (provisionalEnds) end.provisional = true;
    if (s.key !== undefined && derivedSessions && s.last !== null) {
      end.session_key = s.key;
      end.session_gap_ms = this.options.gapMs;
    }
    this.emit({
      event: end,
      seq: s.seq,
      laneKey: s.lane,
      source: s.source,
      raw: undefined,
      synthesized: true,
    });
  }

  private send(s: Staged, seq: number, lane: string): void {
    const e = s.event;
    if (e.event_id === undefined) e.event_id = eventIdFor(s.h, this.occurrence);
    this.emit({
      event: e,
      seq,
      laneKey: lane,
      source: s.source,
      raw: s.raw ?? undefined,
      synthesized: false,
      bytes: s.bytes,
    });
  }
}
