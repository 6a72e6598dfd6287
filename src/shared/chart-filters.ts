import { z } from 'zod';
import { LIMITS } from './limits.js';
import { FORBIDDEN_KEYS, idSchema, isTimeZone, scalarSchema, timeZoneSchema } from './primitives.js';
import { countBins, isDateOnly, isIsoInstant, PERIODS, resolveInstant } from './time-bins.js';

/**
 * Filter types of spec part 2 ("Chart filter types") with the rules of decisions §6. Objects are
 * strict: a misspelt field would otherwise be dropped silently and the chart would answer a
 * different question than the one asked.
 */

export const PROPERTY_OPERATORS = [
  'eq',
  'neq',
  'in',
  'nin',
  'case_insensitive_eq',
  'case_insensitive_neq',
  'regex',
  'not_regex',
  'between',
  'gt',
  'gte',
  'lt',
  'lte',
] as const;
export type PropertyOperator = (typeof PROPERTY_OPERATORS)[number];

/**
 * Operators whose values are matched as text: where values arrive untyped (the CLI's `--where`, the
 * bracket form of `chartControls`), `~ 404` stays the regex "404", not the number 404.
 */
export const TEXT_OPERATORS: ReadonlySet<string> = new Set<PropertyOperator>([
  'regex',
  'not_regex',
  'case_insensitive_eq',
  'case_insensitive_neq',
]);

export const COUNT_OPERATORS = ['eq', 'gt', 'gte', 'lt', 'lte'] as const;
export type CountOperator = (typeof COUNT_OPERATORS)[number];

export const COMBINE_OPERATIONS = ['and', 'or', 'then'] as const;
export const USER_COMBINE_OPERATIONS = ['and', 'or'] as const;

export const ANY_EVENT = 'Any Event';
export const ANY_INTENT = 'Any Intent';
export const ALL_USERS = 'All Users';

/** Largest `within.period.number`; far beyond any real use, small enough that SQL intervals cannot overflow. */
export const MAX_PERIOD_NUMBER = 100_000;

const MULTI_VALUE: ReadonlySet<PropertyOperator> = new Set(['in', 'nin']);
const REGEX: ReadonlySet<PropertyOperator> = new Set(['regex', 'not_regex']);
const ORDERED: ReadonlySet<PropertyOperator> = new Set(['gt', 'gte', 'lt', 'lte', 'between']);

const BOUND_MESSAGE = 'must be an ISO 8601 time with Z or an offset, or a date YYYY-MM-DD';

/**
 * A bound of `range` or `within`: an ISO instant, or a date meaning the start of that day in
 * `range.tz` (for `within` too: it has no zone of its own). Resolve with time-bins' resolveInstant.
 */
export const rangeBoundSchema = z
  .string()
  .refine((s) => isIsoInstant(s) || isDateOnly(s), { message: BOUND_MESSAGE })
  .meta({
    description: 'ISO 8601 time with Z or an offset, or YYYY-MM-DD: the start of that day in range.tz',
  });

/** Trait and property names: they become SQL parameters and JSON keys, so bounded and never prototype keys. */
export const propertyNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.keyLength, `must be at most ${LIMITS.keyLength} characters`)
  .refine((s) => !FORBIDDEN_KEYS.has(s), { message: 'this name is not allowed' });

type OrderedKind = 'number' | 'instant' | undefined;
function orderedKind(value: z.infer<typeof scalarSchema>): OrderedKind {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string' && isIsoInstant(value)) return 'instant';
  return undefined;
}

export const propertyFilterSchema = z
  .strictObject({
    property_name: propertyNameSchema,
    operator: z.enum(PROPERTY_OPERATORS).default('eq'),
    values: z.array(scalarSchema),
  })
  .superRefine((filter, ctx) => {
    const { operator: op, values } = filter;
    const at = (path: PropertyKey[], message: string): void => {
      ctx.addIssue({ code: 'custom', path: ['values', ...path], message });
    };
    if (MULTI_VALUE.has(op)) {
      if (values.length === 0) at([], `operator ${op} takes at least one value`);
    } else if (op === 'between') {
      if (values.length !== 2) at([], 'operator between takes exactly two values');
    } else if (values.length !== 1) {
      at([], `operator ${op} takes exactly one value`);
    }
    values.forEach((value, i) => {
      if (REGEX.has(op) && typeof value !== 'string') at([i], `operator ${op} takes a string`);
      if (ORDERED.has(op) && orderedKind(value) === undefined) {
        at([i], `operator ${op} takes a number or an ISO 8601 time with Z or an offset`);
      }
    });
    const [low, high] = values;
    if (op === 'between' && values.length === 2 && low !== undefined && high !== undefined) {
      const kinds = [orderedKind(low), orderedKind(high)];
      if (kinds[0] && kinds[1] && kinds[0] !== kinds[1]) at([], 'between takes two numbers or two times');
    }
  });
export type PropertyFilter = z.output<typeof propertyFilterSchema>;
export type PropertyFilterInput = z.input<typeof propertyFilterSchema>;

export const periodSchema = z.enum(PERIODS);

export const withinPeriodSchema = z.strictObject({
  number: z
    .number()
    .int('must be a whole number')
    .positive('must be greater than 0')
    .max(MAX_PERIOD_NUMBER, `must be at most ${MAX_PERIOD_NUMBER}`),
  unit: periodSchema,
  tz: timeZoneSchema,
});

export const timeWithinSchema = z
  .strictObject({
    start: rangeBoundSchema.optional(),
    end: rangeBoundSchema.optional(),
    period: withinPeriodSchema.optional(),
  })
  .superRefine((w, ctx) => {
    // `period` overrides start/end, and a mixed date/instant pair needs range.tz to compare; skip those.
    if (w.period || w.start === undefined || w.end === undefined) return;
    const sameForm = isDateOnly(w.start) === isDateOnly(w.end);
    if (sameForm && resolveInstant(w.start, 'UTC')! >= resolveInstant(w.end, 'UTC')!) {
      ctx.addIssue({ code: 'custom', path: [], message: 'start must be before end' });
    }
  });
export type TimeWithin = z.output<typeof timeWithinSchema>;

export const groupByPropertySchema = z.strictObject({
  property_name: propertyNameSchema,
  property_values: z.array(scalarSchema),
});
export type GroupByProperty = z.output<typeof groupByPropertySchema>;

/** How many times a filter's event must have happened; a cohort's terms count the same way. */
export const numberOfSchema = z
  .number()
  // A huge count (1e308) said "must be a whole number", which it is: the bound is said first.
  .max(Number.MAX_SAFE_INTEGER, 'must be at most 2^53 - 1')
  .int('must be a whole number')
  .nonnegative('must not be negative')
  .default(1);

const countFields = {
  number_of: numberOfSchema,
  number_of_operator: z.enum(COUNT_OPERATORS).default('gte'),
  combine_previous_operation: z.enum(COMBINE_OPERATIONS).default('and'),
};

export const eventFilterSchema = z.strictObject({
  event_name: idSchema,
  with: z.array(propertyFilterSchema).optional(),
  within: timeWithinSchema.optional(),
  groupBy: groupByPropertySchema.optional(),
  ...countFields,
});
export type EventFilter = z.output<typeof eventFilterSchema>;
export type EventFilterInput = z.input<typeof eventFilterSchema>;

export const intentFilterSchema = z.strictObject({
  intent: idSchema,
  with: z.array(propertyFilterSchema).optional(),
  within: timeWithinSchema.optional(),
  ...countFields,
});
export type IntentFilter = z.output<typeof intentFilterSchema>;
export type IntentFilterInput = z.input<typeof intentFilterSchema>;

/** Unknown cohort names are the service's 400 ("unknown cohort"), not a shape error, so any name passes. */
export const userFilterSchema = z.strictObject({
  cohort: idSchema.optional(),
  with: z.array(propertyFilterSchema).optional(),
  shown_intents: z.array(intentFilterSchema).optional(),
  performed_events: z.array(eventFilterSchema).optional(),
  combine_previous_operation: z.enum(USER_COMBINE_OPERATIONS).default('or'),
});
export type UserFilter = z.output<typeof userFilterSchema>;
export type UserFilterInput = z.input<typeof userFilterSchema>;

export const traitGroupSchema = z.strictObject({
  trait_name: propertyNameSchema,
  trait_values: z.array(scalarSchema).optional(),
});
export type TraitGroup = z.output<typeof traitGroupSchema>;

const rangeCache = new Map<number, ReturnType<typeof buildChartRangeSchema>>();

function buildChartRangeSchema(maxBins: number) {
  return z
    .strictObject({
      start: rangeBoundSchema,
      end: rangeBoundSchema,
      period: periodSchema,
      tz: timeZoneSchema,
    })
    .superRefine((range, ctx) => {
      // zod skips this when a field failed; the guard keeps it safe if that ever changes.
      if (!isTimeZone(range.tz)) return;
      const start = resolveInstant(range.start, range.tz);
      const end = resolveInstant(range.end, range.tz);
      if (!start || !end) return;
      if (start >= end) {
        ctx.addIssue({ code: 'custom', path: [], message: 'start must be before end' });
        return;
      }
      const bins = countBins(range);
      if (bins > maxBins) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `range has ${bins} ${range.period} bins; at most ${maxBins} are allowed`,
        });
      }
    });
}

/** ChartRange with a bin limit; `cas serve` may configure one other than LIMITS.chartBins. */
export function chartRangeSchemaWith(maxBins: number = LIMITS.chartBins) {
  let schema = rangeCache.get(maxBins);
  if (!schema) {
    schema = buildChartRangeSchema(maxBins);
    rangeCache.set(maxBins, schema);
  }
  return schema;
}

export const chartRangeSchema = chartRangeSchemaWith(LIMITS.chartBins);
export type ChartRange = z.output<typeof chartRangeSchema>;
