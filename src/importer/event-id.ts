import { hash } from 'node:crypto';
import { isPlainObject } from '../shared/event-properties.js';

/**
 * Event ids are derived from content, never from positions or file names: the same event, imported
 * again from this file, a copy of it, or a re-export with rows added, gets the same id, and the
 * service stores each id once. `imp2` names the derivation (imp1 hashed derived session ids in,
 * so the same record got another id when another split of the runs named its session otherwise).
 */
const PREFIX = 'imp2-';

/** A deep copy with object keys sorted: the JSON of equal content is then equal text. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = value[key];
    if (v !== undefined) out[key] = canonical(v);
  }
  return out;
}

/** Hash of an event's JSON (built with a fixed key order; `event_id` left out). */
export function contentHash(json: string): string {
  // One-shot hash: a third of the cost of createHash().update().digest() for short inputs.
  return hash('sha256', json, 'base64url');
}

/**
 * The id of the `occurrence`-th record (from 0) with this content hash: 0 for every record unless
 * `--keep-duplicates` numbers exact duplicates, so that they stay several events and a re-run
 * numbers them alike.
 */
export function eventIdFor(hash: string, occurrence: number): string {
  if (occurrence === 0) return `${PREFIX}${hash}`;
  return `${PREFIX}${contentHash(`${hash}#${occurrence}`)}`;
}

/**
 * The id of a record that the source itself identifies (a Responses API call's turn, usage or n-th
 * function call, by its response id): derived from that identity, not from the content, because
 * the content can change with what else a run reads (a chain's session is named after its first
 * response the run knows; a tool's result comes from a later call), and the record must still be
 * stored once.
 */
export function sourceEventId(...identity: string[]): string {
  return `${PREFIX}src-${contentHash(JSON.stringify(identity))}`;
}

/** The session end an import adds: one id per session, whatever time the end carries. */
export function endEventId(sessionId: string): string {
  return `${PREFIX}end-${contentHash(`end\n${sessionId}`).slice(0, 32)}`;
}

/** The id of the end_conversation an import adds for a conversation of a session. */
export function conversationEndEventId(sessionId: string, conversationId: string): string {
  return `${PREFIX}cend-${contentHash(`end conversation\n${sessionId}\n${conversationId}`).slice(0, 32)}`;
}
