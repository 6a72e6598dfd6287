import { derivedSessionId } from '../../shared/derived-session.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import type { ProjectCache } from './project-cache.js';
import type { ReopenPlan, Replay } from './reopen-plan.js';

/**
 * The names a replay of a derived session may open afresh (replan.ts): its target when that is none
 * of the sessions it replays, and each later part's, `derivedSessionId(key, start)`, whose start is
 * one of its events' times. A superset, since which events start a part is only known when it is
 * planned.
 */
function candidates(replay: Replay, cache: ProjectCache, events: readonly WireEvent[]): string[] {
  const names = new Set<string>([replay.target]);
  // Only an end the data states splits a replay into parts (replan.ts segmentsOf); history keeps
  // only such ends (an import's own is not loaded), so without one no part needs a name hashed.
  const splits =
    replay.sessions.some((id) => cache.history.get(id)?.some((row) => row.type === 'end_session')) ||
    replay.indices.some((i) => {
      const e = events[i];
      return e?.kind === 'end_session' && e.provisional !== true;
    });
  if (replay.key !== null && splits) {
    const key = replay.key;
    for (const id of replay.sessions)
      for (const row of cache.history.get(id) ?? []) names.add(derivedSessionId(key, row.ts));
    for (const index of replay.indices) {
      const at = events[index]?.timestamp;
      if (at !== undefined) names.add(derivedSessionId(key, Date.parse(at)));
    }
  }
  for (const id of replay.sessions) names.delete(id);
  return [...names];
}

/**
 * The names `plan` gives sessions (its replays', and those its events are rerouted to: a derived
 * session the service names) that a filter says may be stored but memory does not hold: they are
 * loaded before planning, so a replay finds out whether another session has the name (the replay is
 * then refused: it was stored a second time under it, two `sessions` rows and two starts), or that
 * nothing has (a refused plan that opened it left it in the filter, and every later request of the
 * key was a 500: found by probing).
 */
export function unloadedPlanNames(
  plan: ReopenPlan,
  cache: ProjectCache,
  events: readonly WireEvent[],
): string[] {
  const names = new Set<string>();
  for (const name of plan.reroute.values()) if (cache.needsSession(name)) names.add(name);
  for (const replay of plan.replays.values())
    for (const name of candidates(replay, cache, events)) if (cache.needsSession(name)) names.add(name);
  return [...names];
}
