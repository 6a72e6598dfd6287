import {
  type EventStat,
  eventStatsQuerySchema,
  eventStatsResponseSchema,
  JSON_TYPES,
  type JsonType,
  PROPERTY_STATS_MAX,
  type PropertyStat,
  propertyStatsQuerySchema,
  propertyStatsResponseSchema,
} from '../../shared/event-stats.js';
import type { Scalar } from '../../shared/primitives.js';
import { invalidInput } from '../errors.js';
import { route } from '../http/route.js';
import type { Database } from '../store/database.js';
import { int, type Param, rows, text } from '../store/statements.js';
import { leaseRead } from './lease.js';

/**
 * Our extension routes of shared/event-stats.ts: what `cas events` and `cas properties` list, and
 * where a chart's empty range sends people. Both are one scan of the project's rows of interest;
 * the regex is RE2 in DuckDB, the event name a bound parameter.
 */

interface EventRow extends Record<string, unknown> {
  event: string;
  n: number;
  users: number;
  first: string;
  last: string;
}

export function eventStatsRoute(db: Database) {
  return route({
    method: 'GET',
    url: '/bc/v1/summary/event-stats',
    tag: 'Summary',
    summary:
      'Our extension: per event name, the stored rows, distinct people, first and last time (optionally names matching an RE2 regex)',
    query: eventStatsQuerySchema,
    response: eventStatsResponseSchema,
    handler: async ({ tenant, query, signal }): Promise<EventStat[]> => {
      const params: Param[] = [text(tenant.projectId)];
      let filter = '';
      if (query.event_regex !== undefined) {
        try {
          await rows(db.read, "SELECT regexp_matches('', $1) AS ok", [text(query.event_regex)]);
        } catch {
          throw invalidInput([{ path: 'event_regex', message: 'not a valid RE2 regex' }]);
        }
        params.push(text(query.event_regex));
        filter = 'AND regexp_matches(e.event, $2)';
      }
      const found = await leaseRead(
        db,
        tenant,
        (reader) =>
          rows<EventRow>(
            reader,
            `SELECT e.event, count(*)::DOUBLE AS n,
                  count(DISTINCT coalesce(u.canonical_user_id, e.user_id))::DOUBLE AS users,
                  strftime(min(e.ts) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS first,
                  strftime(max(e.ts) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS last
             FROM events e
             LEFT JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
            WHERE e.project_id = $1 ${filter}
            GROUP BY e.event ORDER BY e.event`,
            params,
          ),
        signal,
      );
      return found.map((r) => ({ event: r.event, count: r.n, users: r.users, first: r.first, last: r.last }));
    },
  });
}

/** DuckDB's json_each types → JSON's. */
function jsonType(duck: string): JsonType {
  switch (duck) {
    case 'VARCHAR':
      return 'string';
    case 'BOOLEAN':
      return 'boolean';
    case 'ARRAY':
      return 'array';
    case 'OBJECT':
      return 'object';
    case 'NULL':
      return 'null';
    default:
      return 'number';
  }
}

interface PropertyRow extends Record<string, unknown> {
  property: string;
  n: number;
  distinct_values: number;
  types: Array<{ t: string; n: number }>;
  top: Array<{ v: string; n: number }> | null;
}

export function propertyStatsRoute(db: Database) {
  return route({
    method: 'GET',
    url: '/bc/v1/summary/property-stats',
    tag: 'Summary',
    summary:
      'Our extension: the properties of one event with how many rows carry each, their JSON types and most frequent values',
    query: propertyStatsQuerySchema,
    response: propertyStatsResponseSchema,
    handler: async ({ tenant, query, signal }): Promise<PropertyStat[]> => {
      const params = [
        text(tenant.projectId),
        text(query.event_name),
        int(query.top),
        int(PROPERTY_STATS_MAX),
      ];
      const found = await leaseRead(
        db,
        tenant,
        (reader) =>
          rows<PropertyRow>(
            reader,
            `WITH kv AS (
             SELECT j.key AS property, j.value::VARCHAR AS v, j.type AS t
               FROM events e, json_each(e.properties) j
              WHERE e.project_id = $1 AND e.event = $2),
           props AS (
             SELECT property, count(*)::DOUBLE AS n, count(DISTINCT v)::DOUBLE AS distinct_values
               FROM kv GROUP BY property ORDER BY n DESC, property LIMIT $4),
           types AS (
             SELECT property, list({'t': t, 'n': n} ORDER BY n DESC, t) AS types
               FROM (SELECT property, CASE WHEN t IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN 'NUMBER' ELSE t END AS t,
                            count(*)::DOUBLE AS n
                       FROM kv GROUP BY ALL) GROUP BY property),
           ranked AS (
             SELECT property, v, n, row_number() OVER (PARTITION BY property ORDER BY n DESC, v) AS rank
               FROM (SELECT property, v, count(*)::DOUBLE AS n FROM kv
                      WHERE t NOT IN ('ARRAY', 'OBJECT', 'NULL') GROUP BY ALL)),
           top AS (
             SELECT property, list({'v': v, 'n': n} ORDER BY rank) AS top
               FROM ranked WHERE rank <= $3 GROUP BY property)
           SELECT p.property, p.n, p.distinct_values, ty.types, tp.top
             FROM props p JOIN types ty USING (property) LEFT JOIN top tp USING (property)
            ORDER BY p.n DESC, p.property`,
            params,
          ),
        signal,
      );
      return found.map((r) => ({
        property: r.property,
        count: r.n,
        types: [...new Set(r.types.map((t) => jsonType(t.t)))].filter((t) => JSON_TYPES.includes(t)),
        distinct: r.distinct_values,
        top: (r.top ?? []).map((t) => ({ value: JSON.parse(t.v) as Scalar, count: t.n })),
      }));
    },
  });
}
