import { z } from 'zod';
import { LIMITS } from './limits.js';

/** Keys that would poison prototypes if a consumer ever spread the object; decisions §1 rejects them anywhere. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const idSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.idLength, `must be at most ${LIMITS.idLength} characters`);

export const eventIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.eventIdLength, `must be at most ${LIMITS.eventIdLength} characters`);

export const eventNameSchema = idSchema;

/** A scalar as traits and properties allow: string, finite number or boolean (never null or objects). */
export const scalarSchema = z.union([z.string(), z.number().finite(), z.boolean()]);
export type Scalar = z.infer<typeof scalarSchema>;

/** Turn/event properties may also carry string or number arrays (generated `intents`, for one). */
export const propertyValueSchema = z.union([scalarSchema, z.array(z.string()), z.array(z.number().finite())]);
export type PropertyValue = z.infer<typeof propertyValueSchema>;

function boundedRecord<T extends z.ZodType>(value: T) {
  return z.record(z.string(), value).superRefine((obj, ctx) => {
    const keys = Object.keys(obj);
    if (keys.length > LIMITS.keysPerObject) {
      ctx.addIssue({ code: 'custom', message: `at most ${LIMITS.keysPerObject} keys are allowed` });
    }
    for (const key of keys) {
      if (FORBIDDEN_KEYS.has(key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: `key "${key}" is not allowed` });
      } else if (key.length === 0 || key.length > LIMITS.keyLength) {
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
 * so it is rejected here; the importer resolves naive strings with `--tz` before sending.
 */
export const timestampSchema = z.iso.datetime({
  offset: true,
  message: 'must be an ISO 8601 time with Z or an offset',
});

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
