import { z } from 'zod';
import { analysisControlsSchemas } from './analysis-controls.js';
import {
  chartRangeSchemaWith,
  eventFilterSchema,
  intentFilterSchema,
  traitGroupSchema,
  userFilterSchema,
} from './chart-filters.js';
import { segmentationEventFilterSchema } from './chart-measure.js';
import { formatPath, type Issue } from './errors.js';
import { LIMITS } from './limits.js';
import { FORBIDDEN_KEYS } from './primitives.js';

/** The four charts of spec 4.1, then those the hosted OpenAPI adds; routes in CHART_PATHS. */
export const CHART_KINDS = [
  'segmentation',
  'retention',
  'session',
  'user-composition',
  'funnel',
  'intent-distribution',
  'conversation-analysis',
  'intent-analysis',
  'sentiment-analysis',
] as const;
export type ChartKind = (typeof CHART_KINDS)[number];

/** Each chart's path under /bc/v1/charts/ (the analyses have no `-chart` suffix in the OpenAPI). */
export const CHART_PATHS: Readonly<Record<ChartKind, string>> = {
  segmentation: 'segmentation-chart',
  retention: 'retention-chart',
  session: 'session-chart',
  'user-composition': 'user-composition-chart',
  funnel: 'funnel-chart',
  'intent-distribution': 'intent-distribution-chart',
  'conversation-analysis': 'conversation-analysis',
  'intent-analysis': 'intent-analysis',
  'sentiment-analysis': 'sentiment-analysis',
};

export interface ControlsOptions {
  /** Bin limit of decisions §2; `cas serve` may configure it. */
  maxBins?: number;
}

/** A range no bin limit bounds, for charts that build no bins: the limit is of what a chart draws. */
const BINLESS_RANGE = chartRangeSchemaWith(Number.POSITIVE_INFINITY);

function buildSchemas(maxBins: number) {
  const range = chartRangeSchemaWith(maxBins);
  const userFilters = z.array(userFilterSchema).optional();
  const shownIntents = z.array(intentFilterSchema).optional();
  return {
    segmentation: z.strictObject({
      range,
      eventFilters: z.array(segmentationEventFilterSchema).min(1, 'at least one event filter is required'),
      userFilters,
      shownIntents,
    }),
    retention: z.strictObject({
      range,
      startingEvent: eventFilterSchema,
      returnEvents: z.array(eventFilterSchema).optional(),
      userFilters,
      shownIntents,
      groupBy: traitGroupSchema.optional(),
    }),
    session: z.strictObject({
      range,
      eventFilters: z.array(eventFilterSchema).optional(),
      userFilters,
      shownIntents,
      groupBy: traitGroupSchema.optional(),
    }),
    // Spec 4.1 leaves the rest open; the hosted service's OpenAPI requires selectedTrait and adds these.
    'user-composition': z.strictObject({
      range,
      selectedTrait: traitGroupSchema,
      userFilters,
      shownIntents,
      groupBy: traitGroupSchema.optional(),
    }),
    ...analysisControlsSchemas(range, BINLESS_RANGE, userFilters, shownIntents, traitGroupSchema),
  };
}

type Schemas = ReturnType<typeof buildSchemas>;
const schemaCache = new Map<number, Schemas>();

/** The four chartControls schemas for a bin limit (cached: building them is not free). */
export function chartControlsSchemasWith(maxBins: number = LIMITS.chartBins): Schemas {
  let schemas = schemaCache.get(maxBins);
  if (!schemas) {
    schemas = buildSchemas(maxBins);
    schemaCache.set(maxBins, schemas);
  }
  return schemas;
}

export const chartControlsSchemas = chartControlsSchemasWith(LIMITS.chartBins);
export const segmentationControlsSchema = chartControlsSchemas.segmentation;
export const retentionControlsSchema = chartControlsSchemas.retention;
export const sessionControlsSchema = chartControlsSchemas.session;
export const userCompositionControlsSchema = chartControlsSchemas['user-composition'];

export type SegmentationControls = z.output<typeof segmentationControlsSchema>;
export type RetentionControls = z.output<typeof retentionControlsSchema>;
export type SessionControls = z.output<typeof sessionControlsSchema>;
export type UserCompositionControls = z.output<typeof userCompositionControlsSchema>;
export type FunnelControls = z.output<Schemas['funnel']>;
export type IntentDistributionControls = z.output<Schemas['intent-distribution']>;
export type ConversationAnalysisControls = z.output<Schemas['conversation-analysis']>;
export type IntentAnalysisControls = z.output<Schemas['intent-analysis']>;
export type SentimentAnalysisControls = z.output<Schemas['sentiment-analysis']>;
/** What a caller may send: defaults are optional here. */
export type SegmentationControlsInput = z.input<typeof segmentationControlsSchema>;
export type RetentionControlsInput = z.input<typeof retentionControlsSchema>;
export type SessionControlsInput = z.input<typeof sessionControlsSchema>;
export type UserCompositionControlsInput = z.input<typeof userCompositionControlsSchema>;

export interface ChartControlsByKind {
  segmentation: SegmentationControls;
  retention: RetentionControls;
  session: SessionControls;
  'user-composition': UserCompositionControls;
  funnel: FunnelControls;
  'intent-distribution': IntentDistributionControls;
  'conversation-analysis': ConversationAnalysisControls;
  'intent-analysis': IntentAnalysisControls;
  'sentiment-analysis': SentimentAnalysisControls;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

/** Root-level issues name `chartControls` so a 400 never shows an empty path. */
const ROOT = 'chartControls';

/** zod issues as 400 issues; unknown keys get one issue each, on the key itself. */
export function controlsIssues(error: z.ZodError): Issue[] {
  const issues: Issue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const message = FORBIDDEN_KEYS.has(key) ? `key "${key}" is not allowed` : 'unknown field';
        issues.push({ path: formatPath([...issue.path, key]), message });
      }
      continue;
    }
    // "expected string, received undefined" is zod for a missing field; say it plainly.
    const missing = issue.code === 'invalid_type' && issue.message.endsWith('received undefined');
    issues.push({ path: formatPath(issue.path) || ROOT, message: missing ? 'is required' : issue.message });
  }
  return issues;
}

/** Validates a decoded chartControls value and applies the schema defaults. */
export function parseChartControls<K extends ChartKind>(
  kind: K,
  raw: unknown,
  options: ControlsOptions = {},
): Parsed<ChartControlsByKind[K]> {
  if (raw === undefined) return { ok: false, issues: [{ path: ROOT, message: 'is required' }] };
  const schema = chartControlsSchemasWith(options.maxBins)[kind];
  const result = schema.safeParse(raw);
  if (!result.success) return { ok: false, issues: controlsIssues(result.error) };
  // Safe: the schema chosen by `kind` produced this value.
  return { ok: true, value: result.data as ChartControlsByKind[K] };
}
