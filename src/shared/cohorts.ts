import { z } from 'zod';
import { answerOf } from './answer-keys.js';
import { countParam } from './api-params.js';
import { COUNT_OPERATORS, numberOfSchema, propertyFilterSchema, timeWithinSchema } from './chart-filters.js';
import { idSchema } from './primitives.js';
import { userRecordSchema } from './users.js';

/**
 * Cohorts: named user definitions of a project, usable as `cohort` in every chart's UserFilter.
 * A term is an event, intent, trait or (nested) cohort filter; terms combine left to right with their
 * `operator` (the first term's is ignored). Event and intent terms count within `within`, else within
 * the chart's range (as the same filter inline in `performed_events` does); `/cohorts/evaluate` has no
 * chart, so there they count over all time, `within.period` measured back from now.
 */

const count = {
  number_of: numberOfSchema,
  number_of_operator: z.enum(COUNT_OPERATORS).default('gte'),
};

export const cohortEventFilterSchema = z.strictObject({
  type: z.literal('event'),
  event_name: idSchema.describe('an event name, or "Any Event"'),
  with: z.array(propertyFilterSchema).optional(),
  within: timeWithinSchema.optional(),
  ...count,
});

export const cohortIntentFilterSchema = z.strictObject({
  type: z.literal('intent'),
  intent: idSchema.describe('an intent name, or "Any Intent"'),
  with: z.array(propertyFilterSchema).optional(),
  within: timeWithinSchema.optional(),
  ...count,
});

export const cohortTraitFilterSchema = z.strictObject({
  type: z.literal('trait'),
  with: z.array(propertyFilterSchema).min(1, 'give at least one trait filter'),
  // Traits are current values without a history, so a time window cannot apply to them.
  within: z.undefined({ message: 'traits have no time: within is not supported on a trait term' }).optional(),
});

export const cohortCohortFilterSchema = z.strictObject({
  type: z.literal('cohort'),
  // Trimmed as cohort names are: " Pro " found Pro on a chart but was an unknown cohort here.
  name: z.string().trim().pipe(idSchema).describe('another cohort of the project, or "All Users"'),
});

export const cohortTermFilterSchema = z.discriminatedUnion('type', [
  cohortEventFilterSchema,
  cohortIntentFilterSchema,
  cohortTraitFilterSchema,
  cohortCohortFilterSchema,
]);
export type CohortTermFilter = z.output<typeof cohortTermFilterSchema>;

export const cohortTermSchema = z.strictObject({
  operator: z.enum(['and', 'or']).default('and'),
  termFilter: cohortTermFilterSchema,
});
export type CohortTerm = z.output<typeof cohortTermSchema>;

/** Fields of a stored record that a client may send back on PUT; accepted and ignored. */
const recordEcho = {
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
  cohort_id: z.string().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
};

/** What a cohort id looks like (service/cohorts/store.ts): no name may, or `show <id>` could find either. */
export const COHORT_ID = /^coh_[0-9a-f]{24}$/;

/** Names are what people type: trimmed, so "Pro " is "Pro", and never the form of an id. */
const cohortNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .refine((name) => !COHORT_ID.test(name), { message: 'has the form of a cohort id (coh_…)' });

export const cohortBodySchema = z.strictObject({
  name: cohortNameSchema,
  description: z.string().max(2000, 'must be at most 2000 characters').optional(),
  terms: z.array(cohortTermSchema).min(1, 'give at least one term').max(100, 'at most 100 terms'),
  ...recordEcho,
});
export type CohortBody = z.output<typeof cohortBodySchema>;
export type CohortBodyInput = z.input<typeof cohortBodySchema>;

export const cohortRecordSchema = z.object({
  organization_id: z.string(),
  app_id: z.string(),
  cohort_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  name: z.string(),
  description: z.string().optional(),
  terms: z.array(cohortTermSchema),
});
export type CohortRecord = z.output<typeof cohortRecordSchema>;

/** A cohort as a client reads it from any service: the hosted one's terms may carry keys of its own (`_id`). */
export const cohortAnswerSchema = answerOf(cohortRecordSchema);

export const cohortIdQuerySchema = z.object({ cohort_id: z.string().min(1).max(100) });
export const cohortNameQuerySchema = z.object({ name: z.string().trim().min(1).max(100) });
export const cohortEvaluateQuerySchema = z.object({
  cohort_id: z.string().min(1).max(100),
  skip: countParam(0, 10_000_000),
  limit: countParam(1000, 100_000),
});

export const cohortMembersSchema = z.array(userRecordSchema);
export const cohortDeletedSchema = z.object({ status: z.literal('ok'), cohort_id: z.string() });
