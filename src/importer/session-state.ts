import { z } from 'zod';
import type { SourceRef } from './types.js';

/** A conversation the import saw open in a session, ended with the session unless the data ends it. */
export interface OpenConversation {
  last: number | undefined;
  source: SourceRef;
}

/** One open session: everything needed to continue it, or end it, after a resume. */
export interface Session {
  id: string;
  /** The user/device key of a derived session; undefined for a session id the data names. */
  key: string | undefined;
  /** Lane routing key: all events of the session, and of its user, share one lane. */
  lane: string;
  start: number | undefined;
  last: number | undefined;
  /** Ordinal of the session's latest record: untimed sessions are closed by record distance. */
  lastOrdinal: number;
  /** The record at `last` (end events are reported against it if the service refuses them). */
  source: SourceRef;
  conversations: Map<string, OpenConversation>;
  /** Current derived conversation (records without conversation_id), and how many were derived. */
  derived: string | undefined;
  derivedCount: number;
  /** 48-bit prefix of each content hash → occurrences so far (numbering exact duplicates). */
  seen: Map<number, number>;
}

const sourceSchema = z.tuple([z.string(), z.number()]);
const nullableNumber = z.number().nullable();

/** The sessionizer's state in a checkpoint: open sessions in creation order, plus the watermark. */
export const sessionStateSchema = z.object({
  watermark: nullableNumber,
  sessions: z.array(
    z.object({
      id: z.string(),
      key: z.string().nullable(),
      lane: z.string(),
      start: nullableNumber,
      last: nullableNumber,
      lastOrdinal: z.number(),
      source: sourceSchema,
      conversations: z.array(z.tuple([z.string(), nullableNumber, sourceSchema])),
      derived: z.string().nullable(),
      derivedCount: z.number(),
      seen: z.array(z.tuple([z.number(), z.number()])),
    }),
  ),
});
export type SessionState = z.infer<typeof sessionStateSchema>;

const src = (s: SourceRef): [string, number] => [s.file, s.line];
const ref = ([file, line]: [string, number]): SourceRef => ({ file, line });
const orNull = (n: number | undefined): number | null => (n === undefined ? null : n);
const orUndef = (n: number | null): number | undefined => (n === null ? undefined : n);

export function serializeSessions(sessions: Iterable<Session>, watermark: number | undefined): SessionState {
  const out: SessionState = { watermark: orNull(watermark), sessions: [] };
  for (const s of sessions) {
    out.sessions.push({
      id: s.id,
      key: s.key ?? null,
      lane: s.lane,
      start: orNull(s.start),
      last: orNull(s.last),
      lastOrdinal: s.lastOrdinal,
      source: src(s.source),
      conversations: [...s.conversations].map(([id, c]) => [id, orNull(c.last), src(c.source)]),
      derived: s.derived ?? null,
      derivedCount: s.derivedCount,
      seen: [...s.seen],
    });
  }
  return out;
}

export function deserializeSessions(state: SessionState): {
  sessions: Session[];
  watermark: number | undefined;
} {
  const sessions = state.sessions.map(
    (s): Session => ({
      id: s.id,
      key: s.key ?? undefined,
      lane: s.lane,
      start: orUndef(s.start),
      last: orUndef(s.last),
      lastOrdinal: s.lastOrdinal,
      source: ref(s.source),
      conversations: new Map(
        s.conversations.map(([id, last, source]) => [id, { last: orUndef(last), source: ref(source) }]),
      ),
      derived: s.derived ?? undefined,
      derivedCount: s.derivedCount,
      seen: new Map(s.seen),
    }),
  );
  return { sessions, watermark: orUndef(state.watermark) };
}
