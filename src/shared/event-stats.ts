import { z } from 'zod';
import { numberFromQuery } from './api-params.js';
import { idSchema, scalarSchema } from './primitives.js';

/**
 * Our extension routes (not in the hosted service's description): counts and time spans per event
 * name (`GET /bc/v1/summary/event-stats`), and per property of one event its count, JSON types and
 * most frequent values (`GET /bc/v1/summary/property-stats`). `cas events` and `cas properties` show
 * them, and a chart over an empty range uses the spans to say where the data lies. Against a service
 * without them (404), the CLI falls back to the `/agg/*` names.
 */

const optionalText = (schema: z.ZodType<string>) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const eventStatsQuerySchema = z.object({
  event_regex: optionalText(z.string().max(1000, 'must be at most 1000 characters')).describe(
    'RE2 regular expression, matched anywhere in the name (anchor with ^ and $)',
  ),
});
export type EventStatsQuery = z.output<typeof eventStatsQuerySchema>;

export const eventStatSchema = z.object({
  event: z.string(),
  /** Stored rows of that name (generated ones included). */
  count: z.number(),
  /** Distinct people (merged users count once). */
  users: z.number(),
  /** ISO 8601 UTC of the first and last row. */
  first: z.string(),
  last: z.string(),
});
export type EventStat = z.infer<typeof eventStatSchema>;
export const eventStatsResponseSchema = z.array(eventStatSchema);

export const PROPERTY_TOP_MAX = 50;

export const propertyStatsQuerySchema = z.object({
  event_name: idSchema.describe('the event whose properties are described'),
  top: z
    .preprocess(
      numberFromQuery,
      z
        .number({ message: 'must be a number' })
        .int('must be a whole number')
        .min(0, 'must not be negative')
        .max(PROPERTY_TOP_MAX, `must be at most ${PROPERTY_TOP_MAX}`)
        .default(5),
    )
    .describe('most frequent values per property (default 5)'),
});
export type PropertyStatsQuery = z.output<typeof propertyStatsQuerySchema>;

export const JSON_TYPES = ['string', 'number', 'boolean', 'array', 'object', 'null'] as const;
export type JsonType = (typeof JSON_TYPES)[number];

export const propertyStatSchema = z.object({
  property: z.string(),
  /** Rows of the event that carry the property (a JSON null included). */
  count: z.number(),
  /** The JSON types its values have, most frequent first. */
  types: z.array(z.enum(JSON_TYPES)),
  /** Distinct values. */
  distinct: z.number(),
  /** The most frequent scalar values, ties by text. */
  top: z.array(z.object({ value: scalarSchema, count: z.number() })),
});
export type PropertyStat = z.infer<typeof propertyStatSchema>;
export const propertyStatsResponseSchema = z.array(propertyStatSchema);

/** At most this many properties per event are described (the most common first, then by name). */
export const PROPERTY_STATS_MAX = 500;
