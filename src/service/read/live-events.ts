import { z } from 'zod';
import { liveEventsResponseSchema, type StoredEvent } from '../../shared/events.js';
import type { Limits } from '../../shared/limits.js';
import { route } from '../http/route.js';
import { int, type Param, rows, text } from '../ingest/sql.js';
import type { Database } from '../store/database.js';
import { instantSchema, optionalId } from './query.js';

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
export function liveEventsRoute(db: Database, limits: Limits) {
  const query = z
    .object({
      start: instantSchema,
      end: instantSchema,
      limit: z.coerce
        .number()
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(limits.liveEventsMax, `must be at most ${limits.liveEventsMax}`)
        .default(limits.liveEventsDefault),
      session_id: optionalId,
    })
    // An inverted range is a mistake, not an empty answer (event-counts refuses it the same way).
    .refine((q) => q.start <= q.end, { message: 'end must not be before start', path: ['end'] });
  return route({
    method: 'GET',
    url: '/bc/v1/live-events/events',
    tag: 'Live Events',
    summary: 'Stored events in a time range, newest first (limit default 150, at most 10,000)',
    query,
    response: liveEventsResponseSchema,
    handler: async ({ tenant, query: q }) => {
      const params: Param[] = [text(tenant.projectId), int(q.start), int(q.end), int(q.limit)];
      if (q.session_id !== undefined) params.push(text(q.session_id));
      // Newest rows first, then their users: the join runs on `limit` rows, not on the whole range.
      const found = await rows<Row>(
        db.read,
        `WITH top AS (
           SELECT event_id, event, session_id, conversation_id, origin_event_id, ts, properties, user_id, rowid AS rid
             FROM events
            WHERE project_id = $1 AND ts >= make_timestamptz($2 * 1000) AND ts < make_timestamptz($3 * 1000)
                  ${q.session_id === undefined ? '' : 'AND session_id = $5'}
            ORDER BY ts DESC, rowid DESC LIMIT $4)
         SELECT t.event_id, t.event, t.session_id, t.conversation_id, t.origin_event_id,
                epoch_ms(t.ts)::DOUBLE AS ts, t.properties::VARCHAR AS properties,
                c.primary_id, c.traits::VARCHAR AS traits
           FROM top t
           LEFT JOIN users u ON u.project_id = $1 AND u.user_id = t.user_id
           LEFT JOIN users c ON c.project_id = $1 AND c.user_id = u.canonical_user_id
          ORDER BY t.ts DESC, t.rid DESC`,
        params,
      );
      return found.map(
        (r): StoredEvent => ({
          organization_id: tenant.orgId,
          app_id: tenant.projectId,
          session_id: r.session_id ?? '',
          user_id: r.primary_id ?? '',
          event_id: r.event_id,
          ...(r.conversation_id === null ? {} : { conversation_id: r.conversation_id }),
          ...(r.origin_event_id === null ? {} : { origin_event_id: r.origin_event_id }),
          timestamp: new Date(r.ts).toISOString(),
          event: r.event,
          ...(r.properties === null
            ? {}
            : { properties: JSON.parse(r.properties) as StoredEvent['properties'] }),
          ...(r.traits === null ? {} : { user_traits: JSON.parse(r.traits) as StoredEvent['user_traits'] }),
        }),
      );
    },
  });
}
