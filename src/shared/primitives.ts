import { z } from 'zod';
import { LIMITS } from './limits.js';

/** Keys that would poison prototypes if a consumer ever spread the object; decisions §1 rejects them anywhere. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const idSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.idLength, `must be at most ${LIMITS.idLength} characters`);

/**
 * The ids of events the service generates: `<cause's id>#<what>` (service/ingest/rows.ts
 * `generatedId`). A caller's id of that form would be taken for a repeat of a generated event (its
 * event dropped as a duplicate) or stored beside one under the same id, so it is refused.
 */
export const GENERATED_EVENT_ID =
  /#(?:session-started|end|(?:conversation-started|conversation-ended|summary|intent):.*)$/s;

export const eventIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.eventIdLength, `must be at most ${LIMITS.eventIdLength} characters`)
  .refine((id) => !GENERATED_EVENT_ID.test(id), {
    message:
      'ends like the ids of events the service generates (#session-started, #end, #conversation-started:…, #conversation-ended:…, #summary:…, #intent:…), which are reserved',
  });

export const eventNameSchema = idSchema;

/** A scalar as traits and properties allow: string, finite number or boolean (never null or objects). */
export const scalarSchema = z.union([z.string(), z.number().finite(), z.boolean()]);
export type Scalar = z.infer<typeof scalarSchema>;

/** Turn/event properties may also carry string or number arrays (generated `intents`, for one). */
export const propertyValueSchema = z.union([scalarSchema, z.array(z.string()), z.array(z.number().finite())]);
export type PropertyValue = z.infer<typeof propertyValueSchema>;

/**
 * A key's length in characters (code points), as zod counts an id's: counted in UTF-16 units, a key
 * of 51 emoji was refused where an id of 100 passed (found by probing). Only a key longer in units
 * than the limit is counted again.
 */
export function keyLengthOk(key: string): boolean {
  if (key.length === 0) return false;
  if (key.length <= LIMITS.keyLength) return true;
  let n = 0;
  for (const _ of key) if (++n > LIMITS.keyLength) return false;
  return true;
}

function boundedRecord<T extends z.ZodType>(value: T) {
  return z.record(z.string(), value).superRefine((obj, ctx) => {
    const keys = Object.keys(obj);
    if (keys.length > LIMITS.keysPerObject) {
      ctx.addIssue({ code: 'custom', message: `at most ${LIMITS.keysPerObject} keys are allowed` });
    }
    for (const key of keys) {
      if (FORBIDDEN_KEYS.has(key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: `key "${key}" is not allowed` });
      } else if (!keyLengthOk(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `keys must be 1 to ${LIMITS.keyLength} characters`,
        });
      }
    }
  });
}

export const traitsSchema = boundedRecord(scalarSchema);
export type Traits = z.infer<typeof traitsSchema>;

export const propertiesSchema = boundedRecord(propertyValueSchema);
export type Properties = z.infer<typeof propertiesSchema>;

/**
 * ISO 8601 instant with `Z` or an offset (decisions §4). A naive local time is ambiguous on the wire,
 * so it is rejected here; the importer resolves naive strings with `--tz` before sending. Any year:
 * for bounds of a range, which are compared, never stored.
 */
export const instantSchema = z.iso.datetime({
  offset: true,
  message: 'must be an ISO 8601 time with Z or an offset',
});

/** The instants an event may carry: UTC years 1900 through 2199 (our rule; decisions §4 sets no range). */
export const STORED_TIME_RANGE = { from: '1900-01-01', through: '2199-12-31' } as const;
const STORED_FROM_MS = Date.UTC(1900, 0, 1);
const STORED_BEFORE_MS = Date.UTC(2200, 0, 1);
export const STORED_TIME_MESSAGE = `must be between ${STORED_TIME_RANGE.from} and ${STORED_TIME_RANGE.through} (UTC)`;

/**
 * Whether epoch ms `ms` may be stored. The store keeps microseconds, exact in a double only within
 * about 1685-2255, and outside a round range well inside that a date in chat telemetry is a data
 * error (a seconds/ms mix-up, a 0000 placeholder) that is better refused at its path than stored.
 */
export function isStoredInstant(ms: number): boolean {
  return ms >= STORED_FROM_MS && ms < STORED_BEFORE_MS;
}

/**
 * An event's time: an instant the store keeps exactly (an ISO string past the syntax check parses).
 * Every event passes here on the import's critical path, so a year well inside the range, read off
 * the string's first four digits, skips the parse; only the range's ends depend on the offset.
 */
export const timestampSchema = instantSchema.refine(
  (s) => {
    const year = Number(s.slice(0, 4));
    return (year > 1900 && year < 2199) || isStoredInstant(Date.parse(s));
  },
  {
    message: STORED_TIME_MESSAGE,
    // A malformed time gets the syntax message alone, not the range's too.
    when: (payload) => payload.issues.length === 0,
  },
);

export const timeZoneSchema = z.string().refine(isTimeZone, { message: 'unknown time zone' });

const zoneCache = new Map<string, boolean>();
export function isTimeZone(tz: string): boolean {
  let known = zoneCache.get(tz);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      known = tz.length > 0;
    } catch {
      known = false;
    }
    // Only known zones are cached: caching misses would let a stream of made-up names grow the map.
    if (known) zoneCache.set(tz, known);
  }
  return known;
}
