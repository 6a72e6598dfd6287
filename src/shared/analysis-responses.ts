import { z } from 'zod';

/**
 * Response bodies of the charts the hosted OpenAPI adds (funnel, intent distribution, conversation,
 * intent and sentiment analyses), with its field names. Not strict, like the spec charts' schemas:
 * the client reads other servers' answers too. Which fields a point carries depends on `analyse`.
 */

const drilldown = { drilldown_id: z.string().optional() };

/** The user-composition slice's shape (kept apart from chart-responses.ts, which imports this file). */
export const sliceSchema = z.object({
  label: z.string(),
  value: z.number(),
  percent: z.number(),
  ...drilldown,
});
export type Slice = z.infer<typeof sliceSchema>;

export const funnelStepSchema = z.object({
  event: z.string(),
  /** Persons who reached this step. */
  count: z.number(),
  /** 0–100 of the persons who entered (step 1). */
  percent: z.number(),
  ...drilldown,
});
export type FunnelStep = z.infer<typeof funnelStepSchema>;

export const funnelResponseSchema = z.object({
  chart_name: z.string(),
  events: z.array(funnelStepSchema).optional(),
  groups: z.array(z.object({ group: z.string(), events: z.array(funnelStepSchema) })).optional(),
  highlights: z.object({ number_of_users: z.number(), conversion_rate: z.number() }).optional(),
});
export type FunnelResponse = z.infer<typeof funnelResponseSchema>;

export const intentDistributionResponseSchema = z.object({
  chart_name: z.string(),
  slices: z.array(sliceSchema).optional(),
  groups: z.array(z.object({ group: z.string(), slices: z.array(sliceSchema) })).optional(),
  highlights: z
    .object({
      max_percent: z.number(),
      min_percent: z.number(),
      max_count: z.number(),
      min_count: z.number(),
    })
    .optional(),
});
export type IntentDistributionResponse = z.infer<typeof intentDistributionResponseSchema>;

export const sentimentResponseSchema = z.object({
  chart_name: z.string(),
  slices: z.array(sliceSchema).optional(),
  groups: z.array(z.object({ group: z.string(), slices: z.array(sliceSchema) })).optional(),
  highlights: z
    .object({
      positive_percent: z.number(),
      positive_total: z.number(),
      negative_percent: z.number(),
      negative_total: z.number(),
      neutral_percent: z.number(),
      neutral_total: z.number(),
    })
    .optional(),
});
export type SentimentResponse = z.infer<typeof sentimentResponseSchema>;

/**
 * A point of the conversation and intent analyses: its bin plus the numbers of its `analyse`. One
 * loose object with every known field optional (the OpenAPI's anyOf of six shapes says the same,
 * less usefully for a reader).
 */
export const analysisPointSchema = z.object({
  start: z.string(),
  end: z.string(),
  ...drilldown,
  conversion: z.number().optional(),
  conversion_percent: z.number().optional(),
  count: z.number().optional(),
  average_friction_percent: z.number().optional(),
  unique_users: z.number().optional(),
  new_intents: z.number().optional(),
  average: z.number().optional(),
  average_sec: z.number().optional(),
  total_sec: z.number().optional(),
  total: z.number().optional(),
  average_number_turns_per_fulfilled: z.number().optional(),
  total_turns_for_fulfilled_intents: z.number().optional(),
});
export type AnalysisPoint = z.infer<typeof analysisPointSchema>;

export const analysisResponseSchema = z.object({
  chart_name: z.string(),
  points: z.array(analysisPointSchema).optional(),
  groups: z.array(z.object({ group: z.string(), points: z.array(analysisPointSchema) })).optional(),
  // Ours are numbers; the hosted OpenAPI leaves its highlight objects open to other fields (a
  // `"unit": "percent"` failed every conversation chart, found by probing), so text is taken too.
  highlights: z.record(z.string(), z.union([z.number(), z.string()])),
});
export type AnalysisResponse = z.infer<typeof analysisResponseSchema>;
