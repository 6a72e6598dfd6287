import type { WireEvent } from '../../shared/event-bodies.js';
import type { Queryable } from '../store/database.js';
import { int, rowsByKeys, text, texts, tsFromMs } from '../store/statements.js';
import { eventFilter } from './cache-load.js';
import type { ProjectCache } from './project-cache.js';

/**
 * decisions §4: each (project, event_id) is stored once. Which events of the batch are duplicates:
 * a repeat inside the batch, or an id already stored. The hash filter clears almost every id in
 * memory; only ids it may have seen (a re-post, or a rare hash collision) are confirmed with one
 * query, as are all of a request's ids while the filter is not loaded yet (EventIdFilter). The id
 * the service gave an event sent without one is that event's id as much as a caller's own (a caller
 * re-sending it sends a duplicate); a generated row's id never comes from a caller
 * (`GENERATED_EVENT_ID` is refused at validation), so the filter does not hold those.
 */
export async function findDuplicates(
  q: Queryable,
  cache: ProjectCache,
  events: readonly WireEvent[],
  /** Ids accepted by earlier requests of the same transaction, not in the database yet. */
  planned: ReadonlySet<string> = new Set(),
): Promise<boolean[]> {
  const duplicate = events.map(() => false);
  const firstIndex = new Map<string, number>();
  const suspects: string[] = [];
  const filter = events.some((e) => e.event_id !== undefined) ? await eventFilter(q, cache) : null;
  events.forEach((e, i) => {
    const id = e.event_id;
    // An import's provisional end is judged by its session's state, not its id (plan-session.ts):
    // after a reopen the same end must close the session again.
    if (id === undefined || (e.kind === 'end_session' && e.provisional === true)) return;
    if (firstIndex.has(id) || planned.has(id)) duplicate[i] = true;
    else {
      firstIndex.set(id, i);
      if (filter === null || filter.has(id)) suspects.push(id);
    }
  });
  if (suspects.length === 0) return duplicate;
  const stored = await storedAmong(q, cache.projectId, suspects, filter === null ? null : events, firstIndex);
  for (const id of stored) {
    const i = firstIndex.get(id);
    if (i !== undefined) duplicate[i] = true;
  }
  return duplicate;
}

/**
 * Which suspects are stored. Each statement scans the project's event ids, a cost that grows with the
 * store (~50 ms a batch at 650k events, issue 16's incremental import). Once the filter is loaded its
 * suspects are almost all re-sent events, stored with the time they carry again: they are looked for
 * first among the rows of their batch's span of time, which DuckDB reads only in the row groups whose
 * times overlap it (a batch of 1,500 of an export's next, overlapping part at 650k events, by hand:
 * 10 ms against 38 ms). Only those not found there (sent again at another time, a hash collision,
 * no time) are looked for everywhere. While the filter is deferred most suspects are new, so all are
 * looked for everywhere at once.
 */
async function storedAmong(
  q: Queryable,
  project: string,
  suspects: readonly string[],
  /** The batch, when its suspects are the filter's hits; null while the filter is deferred. */
  events: readonly WireEvent[] | null,
  firstIndex: ReadonlyMap<string, number>,
): Promise<string[]> {
  let seen = new Set<string>();
  const timeOf = new Map<string, number>();
  if (events !== null) {
    for (const id of suspects) {
      const at = events[firstIndex.get(id) ?? -1]?.timestamp;
      const ms = at === undefined ? Number.NaN : Date.parse(at);
      if (Number.isFinite(ms)) timeOf.set(id, ms);
    }
  }
  if (timeOf.size > 0) {
    const within = await rowsByKeys<{ event_id: string }>(q, [...timeOf.keys()], (chunk) => {
      let from = Number.POSITIVE_INFINITY;
      let to = Number.NEGATIVE_INFINITY;
      for (const id of chunk) {
        const ms = timeOf.get(id);
        if (ms === undefined) continue;
        from = Math.min(from, ms);
        to = Math.max(to, ms);
      }
      return {
        sql: `SELECT event_id FROM events
               WHERE project_id = $1 AND ts >= ${tsFromMs('$3')} AND ts <= ${tsFromMs('$4')}
                 AND event_id IN (SELECT unnest($2))`,
        params: [text(project), texts(chunk), int(from), int(to)],
      };
    });
    seen = new Set(within.map((r) => r.event_id));
  }
  const rest = suspects.filter((id) => !seen.has(id));
  if (rest.length === 0) return [...seen];
  const everywhere = await rowsByKeys<{ event_id: string }>(q, rest, (chunk) => ({
    sql: `SELECT event_id FROM events
           WHERE project_id = $1 AND event_id IN (SELECT unnest($2))`,
    params: [text(project), texts(chunk)],
  }));
  return [...seen, ...everywhere.map((r) => r.event_id)];
}
