import { z } from 'zod';
import { eventFilterSchema, propertyNameSchema } from './chart-filters.js';

/**
 * Our extension to segmentation (issue 18): what a series measures per bin. `count` (the default)
 * is the spec's chart; the others aggregate a numeric property (event property, else the user's
 * trait, as filters read it) over the series' matching events, so LLM cost and latency are charts.
 * Percentiles interpolate linearly between the two nearest values (DuckDB's quantile_cont).
 */
export const MEASURE_AGGREGATES = ['count', 'sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'] as const;
export type MeasureAggregate = (typeof MEASURE_AGGREGATES)[number];

/** The fraction of a percentile aggregate, undefined for the others. */
export function percentileOf(aggregate: MeasureAggregate): number | undefined {
  const m = /^p(\d\d)$/.exec(aggregate);
  return m ? Number(m[1]) / 100 : undefined;
}

export const MEASURE_DESCRIPTION =
  'Our extension (not in the hosted service): count (default) or sum, avg, min, max, p50, p90, p95, ' +
  'p99 of a numeric property of the matching events (event property, else user trait; non-numbers ' +
  'are skipped). Points then carry `value`: the aggregate over the bin (sum: 0 for none; the others ' +
  'null for none), to 15 significant digits; percentiles interpolate linearly (quantile_cont).';

export const measureSchema = z
  .strictObject({
    aggregate: z.enum(MEASURE_AGGREGATES),
    property_name: propertyNameSchema.optional(),
  })
  .superRefine((m, ctx) => {
    if (m.aggregate === 'count' && m.property_name !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['property_name'], message: 'count takes no property' });
    }
    if (m.aggregate !== 'count' && m.property_name === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['property_name'],
        message: `${m.aggregate} needs the numeric property to aggregate`,
      });
    }
  })
  .meta({ description: MEASURE_DESCRIPTION });
export type Measure = z.output<typeof measureSchema>;

export const segmentationEventFilterSchema = eventFilterSchema.extend({ measure: measureSchema.optional() });
export type SegmentationEventFilter = z.output<typeof segmentationEventFilterSchema>;

/** `sum:cost`, `p95:runtime`, `count`: the CLI's spelling, parsed. */
export function parseMeasureText(text: string): Measure | string {
  const [aggregate = '', ...rest] = text.split(':');
  const property = rest.join(':');
  const agg = MEASURE_AGGREGATES.find((a) => a === aggregate.trim());
  if (!agg) return `unknown aggregate "${aggregate}": one of ${MEASURE_AGGREGATES.join(', ')}`;
  if (agg === 'count') return property === '' ? { aggregate: agg } : 'count takes no property';
  if (property.trim() === '') return `${agg} needs a property, e.g. ${agg}:cost`;
  // Quotes keep a name's own spaces (`sum:' n'`), as in --where: trimmed, " n" was "n", another
  // property, without a word (found by probing).
  const quoted = /^(['"])(.*)\1$/s.exec(property.trim());
  return { aggregate: agg, property_name: quoted ? (quoted[2] ?? '') : property.trim() };
}
