import { EVENT_NAMES } from './event-names.js';

/**
 * The order of a session's events at the same instant: an explicit start first, identity next, then
 * content, then the ends. Sorting by (time, rank, id) gives one order for any set of events, which is
 * how the importer sends a session and how the service replays one it reopens: so both orders agree.
 */
export function eventRank(e: { type?: unknown; event?: unknown }): number {
  if (e.type === 'start_session' || e.event === EVENT_NAMES.conversationStarted) return 0;
  if (e.type === 'end_session') return 4;
  if (e.event === EVENT_NAMES.conversationEnded) return 3;
  if (e.type === 'identify' || e.type === 'alias') return 1;
  return 2;
}
