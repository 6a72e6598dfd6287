import { z } from 'zod';
import { issuesFromZod } from '../../shared/errors.js';
import { idSchema } from '../../shared/primitives.js';
import { invalidInput } from '../errors.js';
import { REQUIRED_PARAM } from '../http/openapi.js';
import { route } from '../http/route.js';
import type { Database } from '../store/database.js';
import { ints, type Param, rows, text } from '../store/statements.js';
import { leaseRead } from './lease.js';
import { optionalId, rangeSchema, rangesFromQuery } from './query.js';

const rangesSchema = z.array(rangeSchema).min(1, 'give at least one range');

const querySchema = z.looseObject({
  ranges: z
    .string()
    .optional()
    .meta({
      description:
        'JSON array of {start, end} (ISO 8601); period and tz are accepted and ignored. Bracket form ranges[0][start]= works too.',
      ...REQUIRED_PARAM,
    }),
  session_id: optionalId,
  conversation_id: optionalId,
  event_name: z.preprocess((v) => (v === '' ? undefined : v), idSchema.optional()),
});

/**
 * GET /bc/v1/summary/event-counts: one count of stored rows (generated ones included) per range,
 * `start <= ts < end`, in the order given; optionally scoped to a session, conversation or event name.
 */
export function eventCountsRoute(db: Database) {
  return route({
    method: 'GET',
    url: '/bc/v1/summary/event-counts',
    tag: 'Summary',
    summary: 'Count stored events in each of the given ranges',
    query: querySchema,
    bracketDecoded: ['ranges'],
    response: z.array(z.number()),
    handler: async ({ tenant, query, request, signal }) => {
      const parsed = rangesSchema.safeParse(rangesFromQuery(request.query as Record<string, unknown>));
      if (!parsed.success) throw invalidInput(issuesFromZod(parsed.error, ['ranges']));
      const ranges = parsed.data;
      const params: Param[] = [
        text(tenant.projectId),
        ints(ranges.map((_, i) => i)),
        ints(ranges.map((r) => r.start)),
        ints(ranges.map((r) => r.end)),
      ];
      const filters: string[] = [];
      for (const [column, value] of [
        ['session_id', query.session_id],
        ['conversation_id', query.conversation_id],
        ['event', query.event_name],
      ] as const) {
        if (value === undefined) continue;
        params.push(text(value));
        filters.push(`AND e.${column} = $${params.length}`);
      }
      const counts = await leaseRead(
        db,
        tenant,
        (reader) =>
          rows<{ i: number; n: number }>(
            reader,
            `SELECT r.i::DOUBLE AS i, count(e.ts)::DOUBLE AS n
           FROM (SELECT unnest($2) AS i, unnest($3) AS s, unnest($4) AS t) r
           LEFT JOIN (SELECT ts FROM events e WHERE e.project_id = $1 ${filters.join(' ')}) e
             ON e.ts >= make_timestamptz(r.s * 1000) AND e.ts < make_timestamptz(r.t * 1000)
          GROUP BY r.i ORDER BY r.i`,
            params,
          ),
        signal,
      );
      return counts.map((c) => c.n);
    },
  });
}
