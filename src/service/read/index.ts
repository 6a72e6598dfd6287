import { z } from 'zod';
import { eventNamesQuerySchema } from '../../shared/agg.js';
import type { Limits } from '../../shared/limits.js';
import { invalidInput } from '../errors.js';
import { route } from '../http/route.js';
import type { Database } from '../store/database.js';
import { type Param, rows, text } from '../store/statements.js';
import { eventCountsRoute } from './event-counts.js';
import { eventStatsRoute, propertyStatsRoute } from './event-stats.js';
import { leaseRead } from './lease.js';
import { LIVE_EVENTS_BYTES, liveEventsRoute } from './live-events.js';

/**
 * GET /bc/v1/agg/event-names: the distinct names of stored rows (generated ones included), sorted.
 * `event_regex` is an RE2 regex run by DuckDB (anywhere in the name), never by JavaScript.
 */
export function eventNamesRoute(db: Database) {
  return route({
    method: 'GET',
    url: '/bc/v1/agg/event-names',
    tag: 'Aggregation',
    summary: 'Distinct event names, optionally matching a regex or scoped to a session or conversation',
    query: eventNamesQuerySchema,
    response: z.array(z.string()),
    handler: async ({ tenant, query, signal }) => {
      const params: Param[] = [text(tenant.projectId)];
      const filters: string[] = [];
      const add = (sql: (n: number) => string, value: string | undefined) => {
        if (value === undefined) return;
        params.push(text(value));
        filters.push(sql(params.length));
      };
      add((n) => `AND session_id = $${n}`, query.session_id);
      add((n) => `AND conversation_id = $${n}`, query.conversation_id);
      if (query.event_regex !== undefined) {
        try {
          await rows(db.read, "SELECT regexp_matches('', $1) AS ok", [text(query.event_regex)]);
        } catch {
          throw invalidInput([{ path: 'event_regex', message: 'not a valid RE2 regex' }]);
        }
      }
      add((n) => `AND regexp_matches(event, $${n})`, query.event_regex);
      // The regex check above runs on the quick connection; the scan leases a pooled reader.
      const found = await leaseRead(
        db,
        tenant,
        (reader) =>
          rows<{ event: string }>(
            reader,
            `SELECT DISTINCT event FROM events WHERE project_id = $1 ${filters.join(' ')} ORDER BY event`,
            params,
          ),
        signal,
      );
      return found.map((r) => r.event);
    },
  });
}

/** Read routes for people and tests: what was stored, counted, and named. */
export function readRoutes(db: Database, limits: Limits, liveEventsBytes = LIVE_EVENTS_BYTES) {
  return [
    liveEventsRoute(db, limits, liveEventsBytes),
    eventCountsRoute(db),
    eventNamesRoute(db),
    eventStatsRoute(db),
    propertyStatsRoute(db),
  ];
}
