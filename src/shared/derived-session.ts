import { hash } from 'node:crypto';

/**
 * The id of a session derived from activity (a user's or device's records without a session id,
 * split where they go quiet for longer than the gap): a function of whose it is and when it starts,
 * never of which record came first in a file. The importer names the sessions of a run this way,
 * and the service renames a session it extends backwards or merges the same way, so any split of
 * the records into runs ends with the names a single run gives.
 */
export function derivedSessionId(key: string, startMs: number | null): string {
  const text = `${key}\n${startMs === null ? 'untimed' : startMs}`;
  return `s_${hash('sha256', text, 'base64url').slice(0, 22)}`;
}
