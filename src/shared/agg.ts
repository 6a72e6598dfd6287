import { z } from 'zod';
import { type BracketTypes, jsonParam, regexParam, scalarFromText, scopeParams } from './api-params.js';
import { PROPERTY_OPERATORS, propertyNameSchema, TEXT_OPERATORS } from './chart-filters.js';
import { isPlainObject } from './event-properties.js';
import { scalarSchema } from './primitives.js';

/**
 * Discovery routes (`/agg/*`): names and values that exist in a project's data, for pickers and for
 * `cas events` / `cas properties`. Every regex is RE2 run by DuckDB. Names come sorted; values come
 * most frequent first (ties by text), at most AGG_VALUES_LIMIT of them, each as its text
 * (`true`, `1.5`), the way group-by labels show them.
 */

export const AGG_VALUES_LIMIT = 1000;

/** A previous pick narrowing the answer: an event property (then user trait), trait or attribute filter. */
export const pickSchema = z.strictObject({
  name: propertyNameSchema,
  value: z.union([scalarSchema, z.array(z.string()), z.array(z.number().finite())]),
  operator: z.enum(PROPERTY_OPERATORS).default('eq'),
});
export type Pick = z.output<typeof pickSchema>;
export type PickInput = z.input<typeof pickSchema>;

/**
 * `picks` in bracket form (`picks[0][value]=5`): a value is a number or boolean when it reads as one,
 * as in `chartControls`, except under a text operator (a regex stays text).
 */
export const pickBracketTypes: BracketTypes = (name, rebuilt) => {
  if (name !== 'picks' || !Array.isArray(rebuilt)) return rebuilt;
  return rebuilt.map((pick: unknown) => {
    if (!isPlainObject(pick) || (typeof pick.operator === 'string' && TEXT_OPERATORS.has(pick.operator)))
      return pick;
    const { value } = pick;
    const read = (v: unknown) => (typeof v === 'string' ? scalarFromText(v) : v);
    return { ...pick, value: Array.isArray(value) ? value.map(read) : read(value) };
  });
};

const picks = jsonParam(z.array(pickSchema).max(50, 'at most 50 picks').optional()).describe(
  'JSON array of {name, value, operator?}: earlier picks that narrow the answer',
);

export const eventNamesQuerySchema = z.object({ event_regex: regexParam, ...scopeParams });

export const propertyNamesQuerySchema = z.object({
  event_regex: regexParam,
  property_regex: regexParam,
  picks,
  ...scopeParams,
});
export const propertyValuesQuerySchema = z.object({
  event_regex: regexParam,
  property_name_regex: regexParam,
  property_value_regex: regexParam,
  ...scopeParams,
});
export const traitNamesQuerySchema = z.object({
  event_regex: regexParam,
  trait_regex: regexParam,
  picks,
  ...scopeParams,
});
export const traitValuesQuerySchema = z.object({
  event_regex: regexParam,
  trait_name_regex: regexParam,
  trait_value_regex: regexParam,
  ...scopeParams,
});
export const userTraitNamesQuerySchema = z.object({
  id_regex: regexParam,
  trait_regex: regexParam,
  picks,
  ...scopeParams,
});
export const userTraitValuesQuerySchema = z.object({
  id_regex: regexParam,
  trait_regex: regexParam,
  trait_value_regex: regexParam,
  ...scopeParams,
});
export const intentNamesQuerySchema = z.object({ intent_regex: regexParam, ...scopeParams });
export const intentAttributeNamesQuerySchema = z.object({
  intent_regex: regexParam,
  attribute_regex: regexParam,
  picks,
  ...scopeParams,
});
export const intentAttributeValuesQuerySchema = z.object({
  intent_regex: regexParam,
  attribute_name_regex: regexParam,
  attribute_value_regex: regexParam,
  ...scopeParams,
});

export const namesResponseSchema = z.array(z.string());
