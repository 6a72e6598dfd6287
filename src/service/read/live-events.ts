import { z } from 'zod';
import { numberFromQuery } from '../../shared/api-params.js';
import { liveEventsResponseSchema, type StoredEvent } from '../../shared/events.js';
import type { Limits } from '../../shared/limits.js';
import { READ_LIMITS } from '../../shared/read-limits.js';
import { route } from '../http/route.js';
import type { Database } from '../store/database.js';
import { int, type Param, rows, text } from '../store/statements.js';
import { leaseRead } from './lease.js';
import { inOrder, instantSchema, optionalId } from './query.js';
import { toStoredEvent } from './stored-event.js';

/**
 * Bytes of stored JSON one answer may carry. Events are up to 1 MiB each, so `limit=630` asked
 * for 630 MiB of properties, built 5.4 GB on the way; the newest events that fit are sent instead,
 * always at least one, and the `X-Truncated` header says the budget cut the list short.
 */
export const LIVE_EVENTS_BYTES = READ_LIMITS.responseBytes;

/** JSON bytes of an event besides its properties and traits (ids, times, names, keys). */
const EVENT_BYTES = 400;

type Row = {
  event_id: string;
  event: string;
  session_id: string | null;
  conversation_id: string | null;
  origin_event_id: string | null;
  ts: number;
  properties: string | null;
  primary_id: string | null;
  traits: string | null;
};

/**
 * GET /bc/v1/live-events/events: stored rows (generated ones included) with `start <= ts < end`,
 * newest first, as the public description's envelope. `user_id` is the person's current primary
 * caller id (after merges and aliases) and `user_traits` their current traits (decisions §4).
 */
export function liveEventsRoute(db: Database, limits: Limits, budgetBytes = LIVE_EVENTS_BYTES) {
  const query = z
    .object({
      start: instantSchema,
      end: instantSchema,
      limit: z.preprocess(
        numberFromQuery,
        z
          .number({ message: 'must be a number' })
          .int('must be a whole number')
          .min(1, 'must be at least 1')
          .max(limits.liveEventsMax, `must be at most ${limits.liveEventsMax}`)
          .default(limits.liveEventsDefault),
      ),
      session_id: optionalId,
    })
    // An inverted range is a mistake, not an empty answer (event-counts refuses it the same way).
    .refine((q) => inOrder(q.start, q.end), { message: 'end must not be before start', path: ['end'] });
  return route({
    method: 'GET',
    url: '/bc/v1/live-events/events',
    tag: 'Live Events',
    summary:
      'Stored events in a time range, newest first (limit default 150, at most 10,000); the newest that fit the byte budget (cas serve --max-response), with header X-Truncated when it cut the list',
    query,
    response: liveEventsResponseSchema,
    handler: async ({ tenant, query: q, reply, signal }) => {
      const params: Param[] = [
        text(tenant.projectId),
        int(q.start),
        int(q.end),
        int(q.limit),
        int(budgetBytes),
        int(EVENT_BYTES),
      ];
      if (q.session_id !== undefined) params.push(text(q.session_id));
      // Newest rows first, then their users: the join runs on `limit` rows, not on the whole range.
      // Sizes are summed in SQL so the rows past the byte budget are never read out of DuckDB.
      const found = await leaseRead(
        db,
        tenant,
        (reader) =>
          rows<Row & { cut: boolean }>(
            reader,
            `WITH top AS (
             SELECT rowid AS rid, ts, user_id, strlen(properties::VARCHAR) AS size
               FROM events
              WHERE project_id = $1 AND ts >= make_timestamptz($2 * 1000) AND ts < make_timestamptz($3 * 1000)
                    ${q.session_id === undefined ? '' : 'AND session_id = $7'}
              ORDER BY ts DESC, rowid DESC LIMIT $4),
           sized AS (
             SELECT t.rid, t.ts, c.primary_id, c.traits,
                    sum($6 + coalesce(t.size, 0) + coalesce(strlen(c.traits::VARCHAR), 0))
                      OVER (ORDER BY t.ts DESC, t.rid DESC ROWS UNBOUNDED PRECEDING) AS upto,
                    row_number() OVER (ORDER BY t.ts DESC, t.rid DESC) AS n,
                    count(*) OVER () AS found
               FROM top t
               LEFT JOIN users u ON u.project_id = $1 AND u.user_id = t.user_id
               LEFT JOIN users c ON c.project_id = $1 AND c.user_id = u.canonical_user_id),
           kept AS (SELECT * FROM sized WHERE upto <= $5 OR n = 1)
           SELECT e.event_id, e.event, e.session_id, e.conversation_id, e.origin_event_id,
                  epoch_ms(k.ts)::DOUBLE AS ts, e.properties::VARCHAR AS properties,
                  k.primary_id, k.traits::VARCHAR AS traits, (SELECT count(*) FROM kept) < k.found AS cut
             FROM kept k JOIN events e ON e.rowid = k.rid
            WHERE e.project_id = $1 AND e.ts >= make_timestamptz($2 * 1000) AND e.ts < make_timestamptz($3 * 1000)
            ORDER BY k.ts DESC, k.rid DESC`,
            params,
          ),
        signal,
      );
      if (found[0]?.cut) reply.header('x-truncated', `byte budget of ${budgetBytes} bytes reached`);
      return found.map((r) =>
        toStoredEvent(tenant, {
          eventId: r.event_id,
          event: r.event,
          sessionId: r.session_id,
          conversationId: r.conversation_id,
          originEventId: r.origin_event_id,
          ts: r.ts,
          properties: r.properties === null ? null : (JSON.parse(r.properties) as StoredEvent['properties']),
          primaryId: r.primary_id,
          traits: r.traits === null ? null : (JSON.parse(r.traits) as StoredEvent['user_traits']),
        }),
      );
    },
  });
}
