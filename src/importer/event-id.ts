import { hash } from 'node:crypto';
import { isPlainObject } from '../shared/event-bodies.js';

/**
 * Event ids are derived from content, never from positions or file names: the same event, imported
 * again from this file, a copy of it, or a re-export with rows added, gets the same id, and the
 * service stores each id once. `imp1` names the derivation, so a future change is recognisable.
 */
const PREFIX = 'imp1-';

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
 * The id of the `occurrence`-th event (from 0) with this content hash in its session: exact
 * duplicates within a session (the same row twice) stay two events, and a re-run numbers them alike.
 */
export function eventIdFor(hash: string, occurrence: number): string {
  if (occurrence === 0) return `${PREFIX}${hash}`;
  return `${PREFIX}${contentHash(`${hash}#${occurrence}`)}`;
}
