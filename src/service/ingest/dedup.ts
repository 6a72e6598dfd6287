import type { WireEvent } from '../../shared/event-bodies.js';
import type { Queryable } from '../store/database.js';
import { rowsByKeys, text, texts } from '../store/statements.js';
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
  const stored = await rowsByKeys<{ event_id: string }>(q, suspects, (chunk) => ({
    sql: `SELECT event_id FROM events
           WHERE project_id = $1 AND event_id IN (SELECT unnest($2))`,
    params: [text(cache.projectId), texts(chunk)],
  }));
  for (const { event_id } of stored) {
    const i = firstIndex.get(event_id);
    if (i !== undefined) duplicate[i] = true;
  }
  return duplicate;
}
