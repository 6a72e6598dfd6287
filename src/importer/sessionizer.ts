import { EVENT_NAMES } from '../shared/event-bodies.js';
import { contentHash, eventIdFor } from './event-id.js';
import { deserializeSessions, type Session, type SessionState, serializeSessions } from './session-state.js';
import { toIso } from './timestamps.js';
import type { MappedRecord, OutEvent, SourceRef, WireJson } from './types.js';

export interface SessionizerOptions {
  /** Inactivity that ends a derived session, in ms (`--session-gap`). */
  gapMs: number;
  /** `--no-end`: never add end_conversation / end_session. */
  noEnd: boolean;
}

/** How often (in records) sessions past the gap are looked for: a fixed cadence keeps resumes identical. */
export const SCAN_EVERY = 1024;
/** A session without timestamps ends once this many records pass without one of its own. */
export const UNTIMED_IDLE_RECORDS = 10_000;

const CONVERSATION_KINDS = new Set(['turn', 'usage', 'function']);

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGIT = new Map([...BASE64URL].map((c, i) => [c.charCodeAt(0), i]));

/** First 48 bits of a base64url hash as a number (a compact key for counting duplicates), no Buffer. */
function hashKey(hash: string): number {
  let n = 0;
  for (let i = 0; i < 8; i++) n = n * 64 + (DIGIT.get(hash.charCodeAt(i)) ?? 0);
  return n;
}

/**
 * Places records in sessions and conversations, derives missing ids, numbers exact duplicates, and
 * adds the end events. State is only the open sessions: a session ends when the newest timestamp
 * seen (the watermark) passes its last record by the gap, or at the end of the input.
 *
 * Every decision depends only on the records and their ordinals, so a run resumed from a snapshot
 * taken before ordinal N emits exactly the events (and ids) an uninterrupted run emits from N on.
 */
export class Sessionizer {
  private readonly byId = new Map<string, Session>();
  private readonly byKey = new Map<string, Session>();
  private watermark: number | undefined;

  constructor(
    private readonly options: SessionizerOptions,
    private readonly emit: (e: OutEvent) => void,
    state?: SessionState,
  ) {
    if (state) {
      const restored = deserializeSessions(state);
      this.watermark = restored.watermark;
      for (const s of restored.sessions) this.register(s);
    }
  }

  get openSessions(): number {
    return this.byId.size;
  }

  snapshot(): SessionState {
    return serializeSessions(this.byId.values(), this.watermark);
  }

  /** Called for every ordinal, before its record (rejected ones too): closes sessions on a fixed cadence. */
  advance(ordinal: number): void {
    if (ordinal % SCAN_EVERY !== 0) return;
    const { gapMs } = this.options;
    for (const s of [...this.byId.values()]) {
      const expired =
        s.last !== undefined
          ? this.watermark !== undefined && this.watermark - s.last > gapMs
          : ordinal - s.lastOrdinal > UNTIMED_IDLE_RECORDS;
      if (expired) this.close(s, ordinal);
    }
  }

  /** End of input: every session still open ends, in the order it opened. */
  finish(seq: number): void {
    for (const s of [...this.byId.values()]) this.close(s, seq);
  }

  add(m: MappedRecord): void {
    if (m.ms !== undefined && (this.watermark === undefined || m.ms > this.watermark)) this.watermark = m.ms;
    if (!m.inSession && m.session === undefined) {
      // identify / alias outside a session: routed with the user's sessions, numbered on their own.
      const lane = m.key ?? String(m.event.previous_id ?? m.event.id ?? '');
      this.send(m.event, undefined, m.ordinal, lane, m.source, m);
      return;
    }
    let session = m.session !== undefined ? this.byId.get(m.session) : this.forKey(m);
    let lone = false;
    if (!session) {
      session = this.open(m);
    } else if (
      m.session === undefined &&
      m.ms !== undefined &&
      session.start !== undefined &&
      m.ms < session.start - this.options.gapMs
    ) {
      // Older than the open session by more than the gap: it gets a session of its own (see --help).
      session = this.open(m, false);
      lone = true;
    }
    this.place(session, m);
    if (m.kind === 'end_session' || m.event.type === 'end_session') this.forget(session);
    else if (lone) this.close(session, m.ordinal);
  }

  /** The user's open derived session, ended first if this record comes after the gap. */
  private forKey(m: MappedRecord): Session | undefined {
    const s = m.key === undefined ? undefined : this.byKey.get(m.key);
    if (s && m.ms !== undefined && s.last !== undefined && m.ms - s.last > this.options.gapMs) {
      this.close(s, m.ordinal);
      return undefined;
    }
    return s;
  }

  private open(m: MappedRecord, register = true): Session {
    const id =
      m.session ??
      `s_${contentHash(`${m.key ?? ''}\n${m.ms ?? '-'}\n${JSON.stringify(m.event)}`).slice(0, 22)}`;
    const s: Session = {
      id,
      key: m.session === undefined ? m.key : undefined,
      lane: m.key ?? id,
      start: m.ms,
      last: m.ms,
      lastOrdinal: m.ordinal,
      source: m.source,
      conversations: new Map(),
      derived: undefined,
      derivedCount: 0,
      seen: new Map(),
    };
    if (register) this.register(s);
    return s;
  }

  private register(s: Session): void {
    this.byId.set(s.id, s);
    if (s.key !== undefined) this.byKey.set(s.key, s);
  }

  private forget(s: Session): void {
    this.byId.delete(s.id);
    if (s.key !== undefined && this.byKey.get(s.key) === s) this.byKey.delete(s.key);
  }

  private place(s: Session, m: MappedRecord): void {
    const e = m.event;
    if (m.inSession || e.session_id !== undefined) e.session_id = s.id;
    if (m.ms !== undefined) {
      if (s.start === undefined || m.ms < s.start) s.start = m.ms;
      if (s.last === undefined || m.ms >= s.last) {
        s.last = m.ms;
        s.source = m.source;
      }
    }
    s.lastOrdinal = m.ordinal;
    let conversation = m.conversation;
    if (conversation === undefined && (CONVERSATION_KINDS.has(m.kind) || m.kind === 'end_conversation')) {
      if (m.kind !== 'end_conversation' && s.derived === undefined) s.derived = `${s.id}/${++s.derivedCount}`;
      conversation = s.derived;
      if (conversation !== undefined) e.conversation_id = conversation;
    }
    if (conversation !== undefined) {
      const ended = m.kind === 'end_conversation' || e.event === EVENT_NAMES.conversationEnded;
      if (ended) {
        s.conversations.delete(conversation);
        if (s.derived === conversation) s.derived = undefined;
      } else {
        const c = s.conversations.get(conversation);
        if (!c) s.conversations.set(conversation, { last: m.ms, source: m.source });
        else if (m.ms !== undefined && (c.last === undefined || m.ms >= c.last)) {
          c.last = m.ms;
          c.source = m.source;
        }
      }
    }
    this.send(e, s, m.ordinal, s.lane, m.source, m);
  }

  /** Ends a session: end_conversation for each conversation still open, then end_session. */
  private close(s: Session, seq: number): void {
    this.forget(s);
    if (this.options.noEnd) return;
    for (const [id, c] of s.conversations) {
      const end: WireJson = {
        type: 'track',
        event: EVENT_NAMES.conversationEnded,
        event_id: undefined,
        timestamp: c.last === undefined ? undefined : toIso(c.last),
        session_id: s.id,
        conversation_id: id,
      };
      this.send(end, s, seq, s.lane, c.source, undefined);
    }
    const end: WireJson = {
      type: 'end_session',
      event_id: undefined,
      timestamp: s.last === undefined ? undefined : toIso(s.last),
      session_id: s.id,
    };
    this.send(end, s, seq, s.lane, s.source, undefined);
  }

  private send(
    e: WireJson,
    s: Session | undefined,
    seq: number,
    lane: string,
    source: SourceRef,
    m: MappedRecord | undefined,
  ): void {
    if (e.event_id === undefined) {
      const hash = contentHash(JSON.stringify(e));
      let n = 0;
      if (s) {
        const k = hashKey(hash);
        n = s.seen.get(k) ?? 0;
        s.seen.set(k, n + 1);
      }
      e.event_id = eventIdFor(hash, n);
    }
    this.emit({ event: e, seq, laneKey: lane, source, raw: m?.raw, synthesized: m === undefined });
  }
}
