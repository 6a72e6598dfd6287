import { z } from 'zod';

/**
 * Another service's answer may carry fields our schemas do not know, even inside objects our own
 * bodies keep strict (a cohort's terms, where a stored document's `_id` failed `cas cohorts list`
 * against the hosted service, found by probing). This drops, throughout `value`, the keys `schema`
 * does not name, so a strict schema can still read a looser answer. The body schemas stay strict:
 * a caller's unknown key is refused, a service's is ignored.
 */
export function knownKeysOnly(schema: z.ZodType, value: unknown): unknown {
  if (schema instanceof z.ZodObject) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const shape = schema.shape as Record<string, z.ZodType>;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (field !== undefined) out[key] = knownKeysOnly(field, inner);
    }
    return out;
  }
  if (schema instanceof z.ZodArray)
    return Array.isArray(value) ? value.map((v) => knownKeysOnly(schema.element as z.ZodType, v)) : value;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable)
    return value === undefined || value === null ? value : knownKeysOnly(schema.unwrap() as z.ZodType, value);
  if (schema instanceof z.ZodDefault) return knownKeysOnly(schema.removeDefault() as z.ZodType, value);
  if (schema instanceof z.ZodPipe) return knownKeysOnly(schema.in as z.ZodType, value);
  if (schema instanceof z.ZodUnion) {
    // The first option the value fits once stripped for it (a discriminated union's by its tag).
    for (const option of schema.options as readonly z.ZodType[]) {
      const stripped = knownKeysOnly(option, value);
      if (option.safeParse(stripped).success) return stripped;
    }
  }
  return value;
}

/** `schema`, reading an answer whose objects may hold keys it does not know (see knownKeysOnly). */
export function answerOf<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => knownKeysOnly(schema, value), schema);
}
