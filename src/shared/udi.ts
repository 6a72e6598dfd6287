import { z } from 'zod';
import { ANY_INTENT } from './chart-filters.js';

/**
 * User-defined intents (`/udi`): a project's named intents, found in closed conversations' user
 * utterances. `patterns` (our extension) are RE2 regexes run by DuckDB, case-insensitive, anywhere in
 * an utterance; an intent without patterns is found where its name appears as words. Archived
 * intents are kept but no longer found. `cas serve --intents <file>` adds the file's intents that the
 * project does not have yet (by name), replacing nothing.
 */

/** What an intent id looks like (the service's `udi_` + 24 hex digits): no name may, as for cohorts. */
export const UDI_ID = /^udi_[0-9a-f]{24}$/;

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

export const udiNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters');

export const udiBodySchema = z.strictObject({
  intent: z.strictObject({
    // Chart filters' word for every intent: an intent of that name could never be picked alone.
    name: udiNameSchema
      .refine((name) => name.toLowerCase() !== ANY_INTENT.toLowerCase(), {
        message: `"${ANY_INTENT}" is reserved: filters use it for every intent`,
      })
      // `cas intents remove` takes a name or an id: a name of an id's form removed another intent.
      .refine((name) => !UDI_ID.test(name), { message: 'has the form of an intent id (udi_…)' }),
    description: text(2000).default(''),
  }),
  attributes: z
    .array(z.strictObject({ name: udiNameSchema, description: text(2000).default('') }))
    .max(100, 'at most 100 attributes')
    .superRefine((attributes, ctx) => {
      const seen = new Set<string>();
      attributes.forEach((a, i) => {
        if (seen.has(a.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'named twice' });
        seen.add(a.name);
      });
    })
    .default([]),
  archived: z.boolean().default(false),
  patterns: z
    .array(z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'))
    .max(100, 'at most 100 patterns')
    .optional()
    .describe(
      'our extension: RE2 patterns matched case-insensitively in user utterances; omitted on PUT, the stored ones are kept',
    ),
  user_defined_intent_id: z.string().optional().describe('accepted and ignored'),
});
export type UdiBody = z.output<typeof udiBodySchema>;
export type UdiBodyInput = z.input<typeof udiBodySchema>;

export const udiRecordSchema = z.object({
  user_defined_intent_id: z.string(),
  intent: z.object({ name: z.string(), description: z.string() }),
  attributes: z.array(z.object({ name: z.string(), description: z.string() })),
  archived: z.boolean(),
  patterns: z.array(z.string()),
});
export type UdiRecord = z.output<typeof udiRecordSchema>;

/**
 * What a client takes from `/udi`: the hosted service's record has no `patterns` (ours) and may leave
 * `archived` out; every valid hosted answer failed `cas intents` (found by probing).
 */
export const udiAnswerSchema = udiRecordSchema.extend({
  archived: z.boolean().default(false),
  patterns: z.array(z.string()).default([]),
});

export const udiParamsSchema = z.object({ user_defined_intent_id: z.string().min(1).max(100) });
export const udiDeletedSchema = z.object({ success: z.boolean() });
export const udiDeletedAnswerSchema = udiDeletedSchema.optional();
