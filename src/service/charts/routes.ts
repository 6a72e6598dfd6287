import { z } from 'zod';
import {
  CONVERSATION_ANALYSIS_DESCRIPTION,
  FUNNEL_DESCRIPTION,
  INTENT_ANALYSIS_DESCRIPTION,
  INTENT_DISTRIBUTION_DESCRIPTION,
  SENTIMENT_DESCRIPTION,
} from '../../shared/analysis-controls.js';
import { CHART_PATHS, type ChartControlsByKind, type ChartKind } from '../../shared/chart-controls.js';
import { MEASURE_DESCRIPTION } from '../../shared/chart-measure.js';
import { parseChartControlsQuery, type QueryRecord } from '../../shared/chart-query.js';
import {
  chartResponseSchemas,
  retrieveDataQuerySchema,
  retrieveDataResponseSchema,
} from '../../shared/chart-responses.js';
import { LIMITS } from '../../shared/limits.js';
import { idSchema } from '../../shared/primitives.js';
import { countBins } from '../../shared/time-bins.js';
import { cohortsFor } from '../cohorts/store.js';
import { invalidInput } from '../errors.js';
import { REQUIRED_PARAM } from '../http/openapi.js';
import { route } from '../http/route.js';
import { leaseRead } from '../read/lease.js';
import type { Database } from '../store/database.js';
import { assertCells, CHART_BUDGET_DEFAULTS, type ChartBudget, cellsAtLeast } from './budget.js';
import { type ChartContext, type ChartScope, makeContext } from './context.js';
import { conversationAnalysisChart } from './conversation-analysis.js';
import { DrilldownStore } from './drilldown-store.js';
import { funnelChart } from './funnel.js';
import { intentAnalysisChart } from './intent-analysis.js';
import { intentDistributionChart } from './intent-distribution.js';
import { retentionChart } from './retention.js';
import { retrieveData } from './retrieve.js';
import { segmentationChart } from './segmentation.js';
import { sentimentChart } from './sentiment.js';
import { sessionChart } from './session-chart.js';
import { userCompositionChart } from './user-composition.js';
import { assertChartValid } from './validate.js';

/** Query parameters of spec 4.1. Loose: bracket-form `chartControls[...]` keys must reach the parser. */
const chartQuerySchema = z.looseObject({
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
  session_id: idSchema.optional(),
  conversation_id: idSchema.optional(),
  chartControls: z
    .string()
    .optional()
    .meta({
      description:
        'The chart controls as compact JSON; bracket form chartControls[range][start]=… is accepted too',
      ...REQUIRED_PARAM,
    }),
});
type ChartQuery = z.infer<typeof chartQuerySchema>;

export interface ChartLimits {
  chartBins: number;
  sessionIdsPerPoint: number;
  drilldownRows: number;
}

const CHARTS: { [K in ChartKind]: (ctx: ChartContext, c: ChartControlsByKind[K]) => Promise<unknown> } = {
  segmentation: segmentationChart,
  retention: retentionChart,
  session: sessionChart,
  'user-composition': userCompositionChart,
  funnel: funnelChart,
  'intent-distribution': intentDistributionChart,
  'conversation-analysis': conversationAnalysisChart,
  'intent-analysis': intentAnalysisChart,
  'sentiment-analysis': sentimentChart,
};

const SUMMARIES: Record<ChartKind, string> = {
  segmentation: 'Events, unique users and events per user over time, per event filter',
  retention: 'Returning users per cohort of first starting event',
  session: 'Sessions, their conversations and mean length over time',
  'user-composition': 'Active users split by a trait',
  funnel: 'Persons reaching each ordered step, first touch, within a conversion window',
  'intent-distribution': 'Conversations per intent',
  'conversation-analysis':
    'Conversation numbers over time (intents, friction, new intents, sentiment, duration, prompts)',
  'intent-analysis': 'Intent fulfillment and acceptance over time',
  'sentiment-analysis': 'Conversations by sentiment, for conversations with an intent',
};

/** Our decisions where the hosted OpenAPI is silent, served in our OpenAPI document. */
const DESCRIPTIONS: Partial<Record<ChartKind, string>> = {
  segmentation: `eventFilters[].measure: ${MEASURE_DESCRIPTION}`,
  funnel: FUNNEL_DESCRIPTION,
  'intent-distribution': INTENT_DISTRIBUTION_DESCRIPTION,
  'conversation-analysis': CONVERSATION_ANALYSIS_DESCRIPTION,
  'intent-analysis': INTENT_ANALYSIS_DESCRIPTION,
  'sentiment-analysis': SENTIMENT_DESCRIPTION,
};

function scopeOf(query: ChartQuery): ChartScope {
  const scope: ChartScope = {};
  if (query.session_id !== undefined) scope.session_id = query.session_id;
  if (query.conversation_id !== undefined) scope.conversation_id = query.conversation_id;
  return scope;
}

export interface ChartRouteOptions {
  budget?: ChartBudget;
  drilldowns?: DrilldownStore;
}

/**
 * Validation (time zone and regex checks, a few microseconds each) runs on the quick connection;
 * only the chart's own queries lease a pooled reader, within its time budget.
 */
export function chartRoutes(db: Database, limits: ChartLimits = LIMITS, options: ChartRouteOptions = {}) {
  const budget = options.budget ?? CHART_BUDGET_DEFAULTS;
  const drilldowns = options.drilldowns ?? new DrilldownStore({ db });
  const chart = <K extends ChartKind>(kind: K) =>
    route({
      method: 'GET',
      url: `/bc/v1/charts/${CHART_PATHS[kind]}`,
      tag: 'Charts',
      summary: SUMMARIES[kind],
      ...(DESCRIPTIONS[kind] ? { description: DESCRIPTIONS[kind] } : {}),
      query: chartQuerySchema,
      bracketDecoded: ['chartControls'],
      response: chartResponseSchemas[kind],
      rate: 'chart',
      handler: async ({ tenant, query, signal }) => {
        const parsed = parseChartControlsQuery(kind, query as QueryRecord, { maxBins: limits.chartBins });
        // Paths are relative to chartControls, as decisions §1 shows (`range.tz`).
        if (!parsed.ok) throw invalidInput(parsed.issues);
        await assertChartValid(db.read, parsed.value);
        // Counted, not built: a funnel, intents or sentiment chart may span any number of bins it never draws.
        assertCells(cellsAtLeast(kind, parsed.value, countBins(parsed.value.range)), budget);
        return leaseRead(
          db,
          tenant,
          async (q) => {
            const cohorts = await cohortsFor(q, tenant.projectId, parsed.value);
            const ctx = makeContext(
              q,
              tenant.projectId,
              parsed.value.range,
              scopeOf(query),
              limits.sessionIdsPerPoint,
              {
                drilldowns,
                budget,
                cohorts,
              },
            );
            return CHARTS[kind](ctx, parsed.value);
          },
          signal,
        );
      },
    });
  return [
    chart('segmentation'),
    chart('retention'),
    chart('session'),
    chart('user-composition'),
    chart('funnel'),
    chart('intent-distribution'),
    chart('conversation-analysis'),
    chart('intent-analysis'),
    chart('sentiment-analysis'),
    route({
      method: 'GET',
      url: '/bc/v1/db/retrieve_data',
      tag: 'Charts',
      summary: 'The users (or sessions) behind one chart point, from its drilldown_id',
      query: retrieveDataQuerySchema,
      response: retrieveDataResponseSchema,
      rate: 'chart',
      refusals: { 404: 'Unknown drilldown id: another project, or expired' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(
          db,
          tenant,
          (q) =>
            retrieveData(
              q,
              tenant.projectId,
              query.id,
              { maxRows: limits.drilldownRows, sessionIdsPerPoint: limits.sessionIdsPerPoint },
              { drilldowns, checks: db.read },
            ),
          signal,
        ),
    }),
  ];
}
