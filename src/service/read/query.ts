import { z } from 'zod';
import { FORBIDDEN_KEY_MESSAGE, findJsonProblem, LONE_SURROGATE_MESSAGE } from '../../shared/json-problem.js';
import { idSchema } from '../../shared/primitives.js';
import { isDateOnly } from '../../shared/time-bins.js';
import { invalidInput } from '../errors.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An instant in a read route's query, as epoch ms: ISO 8601 with `Z` or an offset, or a plain date
 * (midnight UTC), since the public description calls these "ISO date strings".
 */
export const instantSchema = z
  .string()
  .trim()
  // isDateOnly on the date part: Date.parse rolls 2025-02-30 over to 2 March instead of refusing it.
  .refine(
    (s) =>
      (DATE_ONLY.test(s) || DATE_TIME.test(s)) && isDateOnly(s.slice(0, 10)) && !Number.isNaN(Date.parse(s)),
    {
      message: 'must be an ISO 8601 date, or a time with Z or an offset',
    },
  )
  .transform((s) => Date.parse(DATE_ONLY.test(s) ? `${s}T00:00:00Z` : s));

/** Optional scoping parameters the read routes share; empty values count as absent. */
export const optionalId = z.preprocess((v) => (v === '' ? undefined : v), idSchema.optional());

/**
 * Whether `start` (epoch ms) is not after `end`. zod runs an object's refinement even when a field
 * failed, with that field's raw text: a bound that is not a time has its own issue, not this one too.
 */
export function inOrder(start: unknown, end: unknown): boolean {
  return typeof start !== 'number' || typeof end !== 'number' || start <= end;
}

export const rangeSchema = z
  .object({
    start: instantSchema,
    end: instantSchema,
    // Accepted as the public description has them, and ignored: a range is counted whole.
    period: z.enum(['day', 'week', 'month']).optional(),
    tz: z.string().optional(),
  })
  .refine((r) => inOrder(r.start, r.end), { message: 'end must not be before start', path: ['end'] });

const BRACKET = /^ranges\[(\d+)\]\[(start|end|period|tz)\]$/;

/**
 * `ranges` from a query string: one parameter of compact JSON (decisions §1), or bracket form
 * `ranges[0][start]=...` as browsers build it.
 */
export function rangesFromQuery(query: Readonly<Record<string, unknown>>): unknown {
  const raw = query.ranges;
  if (typeof raw === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return raw;
    }
    // Refused anywhere, as in a body and in the bracket form (decisions §1); the JSON form took
    // `{"__proto__": …}` inside a range (found by probing).
    const found = findJsonProblem(parsed, { keys: true, strings: true });
    if (found !== undefined) {
      const message = found.problem === 'forbidden key' ? FORBIDDEN_KEY_MESSAGE : LONE_SURROGATE_MESSAGE;
      throw invalidInput([{ path: `ranges${found.path}`, message }]);
    }
    return parsed;
  }
  const entries = Object.entries(query).flatMap(([key, value]) => {
    const match = BRACKET.exec(key);
    return match ? [{ index: Number(match[1]), field: match[2]!, value }] : [];
  });
  const out: Array<Record<string, unknown>> = [];
  for (const { index, field, value } of entries) {
    // A list without gaps has no index at or past its number of keys: refusing such an index up front
    // keeps `ranges[99999][start]=x` from allocating a 100,000-slot array to say so.
    if (index >= entries.length) {
      throw invalidInput([
        { path: `ranges[${index}]`, message: 'bracket indices must run 0, 1, 2, ... without gaps' },
      ]);
    }
    out[index] = { ...out[index], [field]: value };
  }
  return out.length > 0 ? Array.from(out, (r) => r ?? {}) : raw;
}
