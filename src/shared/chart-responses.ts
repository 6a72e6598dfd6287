import { z } from 'zod';
import {
  type AnalysisResponse,
  analysisResponseSchema,
  type FunnelResponse,
  funnelResponseSchema,
  type IntentDistributionResponse,
  intentDistributionResponseSchema,
  type SentimentResponse,
  sentimentResponseSchema,
} from './analysis-responses.js';
import { scalarSchema } from './primitives.js';

/**
 * Chart response bodies with the hosted service's OpenAPI names (spec 4.1, decisions §6). Objects
 * are not strict: the client validates other servers' answers too, and an extra field there must not
 * turn a good chart into an error. Point `start`/`end` are bin bounds with the zone's offset.
 */

const drilldown = { drilldown_id: z.string().optional() };

export const segPointSchema = z.object({
  start: z.string(),
  end: z.string(),
  /** Matching events in the bin. */
  total: z.number(),
  /** Distinct users among them. */
  unique: z.number(),
  /** total / unique, 0 when unique is 0. */
  average: z.number(),
  /** With a `measure` other than count (our extension): its aggregate over the bin; null for none. */
  value: z.number().nullable().optional(),
  ...drilldown,
});
export type SegPoint = z.infer<typeof segPointSchema>;

export const segmentationResultSchema = z.object({
  event_name: z.string(),
  /** Our extension: the series' measure when not a plain count, e.g. `p95:completion_tokens`. */
  measure: z.string().optional(),
  points: z.array(segPointSchema).optional(),
  groups: z.array(z.object({ group: z.string(), points: z.array(segPointSchema) })).optional(),
  highlights: z.object({ average_events: z.number(), average_unique_users: z.number() }).optional(),
});
export type SegmentationResult = z.infer<typeof segmentationResultSchema>;

export const segmentationResponseSchema = z.array(segmentationResultSchema);
export type SegmentationResponse = z.infer<typeof segmentationResponseSchema>;

export const retentionCellSchema = z.object({
  start: z.string(),
  end: z.string(),
  count: z.number(),
  /** 0–100, relative to the row's starting-event users. */
  percent: z.number(),
  ...drilldown,
});
export type RetentionCell = z.infer<typeof retentionCellSchema>;

export const retentionResultSchema = z.object({
  chart_name: z.string(),
  rows: z.array(z.array(retentionCellSchema)).optional(),
  column_headers: z.array(z.object({ count: z.number(), average: z.number() })),
  row_headers: z.array(z.number()),
  total_users: z.number(),
});
export type RetentionResult = z.infer<typeof retentionResultSchema>;

export const retentionResponseSchema = z.array(retentionResultSchema);
export type RetentionResponse = z.infer<typeof retentionResponseSchema>;

export const sessionPointSchema = z.object({
  start: z.string(),
  end: z.string(),
  sessions: z.number(),
  /** First LIMITS.sessionIdsPerPoint by start time on our service; other servers may send more. */
  session_ids: z.array(z.string()),
  conversations: z.number(),
  /** Mean session duration in seconds. */
  average_length: z.number(),
  ...drilldown,
});
export type SessionPoint = z.infer<typeof sessionPointSchema>;

export const sessionChartResponseSchema = z.object({
  chart_name: z.string(),
  points: z.array(sessionPointSchema).optional(),
  groups: z.array(z.object({ group: z.string(), points: z.array(sessionPointSchema) })).optional(),
});
export type SessionChartResponse = z.infer<typeof sessionChartResponseSchema>;

export const compositionSliceSchema = z.object({
  label: z.string(),
  /** Users in the slice. */
  value: z.number(),
  /** 0–100 share of the slices' total. */
  percent: z.number(),
  ...drilldown,
});
export type CompositionSlice = z.infer<typeof compositionSliceSchema>;

export const userCompositionResponseSchema = z.object({
  chart_name: z.string(),
  slices: z.array(compositionSliceSchema).optional(),
  groups: z.array(z.object({ group: z.string(), slices: z.array(compositionSliceSchema) })).optional(),
  highlights: z
    .object({
      max_percent: z.number(),
      min_percent: z.number(),
      max_count: z.number(),
      min_count: z.number(),
    })
    .optional(),
});
export type UserCompositionResponse = z.infer<typeof userCompositionResponseSchema>;

/** Response schema per chart kind (the keys are CHART_KINDS of chart-controls.ts). */
export const chartResponseSchemas = {
  segmentation: segmentationResponseSchema,
  retention: retentionResponseSchema,
  session: sessionChartResponseSchema,
  'user-composition': userCompositionResponseSchema,
  funnel: funnelResponseSchema,
  'intent-distribution': intentDistributionResponseSchema,
  'conversation-analysis': analysisResponseSchema,
  'intent-analysis': analysisResponseSchema,
  'sentiment-analysis': sentimentResponseSchema,
} as const;

export interface ChartResponseByKind {
  segmentation: SegmentationResponse;
  retention: RetentionResponse;
  session: SessionChartResponse;
  'user-composition': UserCompositionResponse;
  funnel: FunnelResponse;
  'intent-distribution': IntentDistributionResponse;
  'conversation-analysis': AnalysisResponse;
  'intent-analysis': AnalysisResponse;
  'sentiment-analysis': SentimentResponse;
}

/*
 * GET /bc/v1/db/retrieve_data?id=<drilldown_id>. The hosted OpenAPI says only "a JSON object or
 * array", so this shape is ours (decisions §6): the users behind a point, or the sessions for the
 * session chart, at most LIMITS.drilldownRows, with the full count so a caller knows what was cut.
 */

export const drilldownUserSchema = z.object({
  /** Service-side id, `u_…`. */
  user_id: z.string(),
  /** The caller's current id (an `anon_…` id for a device-only user). */
  id: z.string(),
  traits: z.record(z.string(), scalarSchema),
});
export type DrilldownUser = z.infer<typeof drilldownUserSchema>;

export const drilldownSessionSchema = z.object({
  session_id: z.string(),
  user_id: z.string(),
  id: z.string(),
  /** ISO 8601 UTC, the session's first event. */
  started_at: z.string(),
  /** end_session time; null while the session is open. */
  ended_at: z.string().nullable(),
  conversations: z.number(),
});
export type DrilldownSession = z.infer<typeof drilldownSessionSchema>;

const drilldownCounts = {
  /** Rows behind the point before the cap. */
  total: z.number(),
  /** True when `rows` holds fewer than `total`. */
  truncated: z.boolean(),
};

export const retrieveDataResponseSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('users'), ...drilldownCounts, rows: z.array(drilldownUserSchema) }),
  z.object({ kind: z.literal('sessions'), ...drilldownCounts, rows: z.array(drilldownSessionSchema) }),
]);
export type RetrieveDataResponse = z.infer<typeof retrieveDataResponseSchema>;

/** The drilldown route's query: the opaque token a point carried as `drilldown_id`. */
export const retrieveDataQuerySchema = z.object({ id: z.string().min(1, 'must not be empty') });
export type RetrieveDataQuery = z.infer<typeof retrieveDataQuerySchema>;
