import type { IntentAnalyse } from '../../shared/analysis-controls.js';
import {
  type AnalysisPoint,
  type AnalysisResponse,
  analysisResponseSchema,
} from '../../shared/analysis-responses.js';
import type { IntentAnalysisControls } from '../../shared/chart-controls.js';
import { intentFacts, type SummaryField } from './analysis-facts.js';
import { type AggRow, type Aggregates, binnedAndWhole, buildAnalysis, ratio } from './analysis-points.js';
import { binKey, type ChartContext } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { type GroupKey, groupIs } from './groups.js';
import { all, Query } from './sql.js';

/**
 * Intent analysis (analysis-controls.ts INTENT_ANALYSIS_DESCRIPTION): per bin, numbers over the
 * `Intent Informed` events in it whose conversation has a summary in the range. Fulfilled: the
 * conversation had no function errors; accepted: it went on after the intent (2 or more turns).
 */

type Shape = {
  point: (a: Aggregates) => Partial<AnalysisPoint>;
  highlights: (a: Aggregates) => Record<string, number>;
};

const v = (a: Aggregates, k: string) => a[k] ?? 0;
const fulfilledTotals = (a: Aggregates) => ({
  unique_fulfilled_intents: v(a, 'u_fulfilled'),
  total_fulfilled_intents: v(a, 'fulfilled'),
});

const SHAPES: Record<IntentAnalyse, Shape> = {
  intentFulfillmentFriction: {
    point: (a) => ({
      average_number_turns_per_fulfilled: ratio(a.turns_fulfilled, a.fulfilled),
      total_turns_for_fulfilled_intents: v(a, 'turns_fulfilled'),
    }),
    highlights: (a) => ({
      average_number_turns_per_fulfilled: ratio(a.turns_fulfilled, a.fulfilled),
      ...fulfilledTotals(a),
    }),
  },
  intentFulfillmentRate: {
    point: (a) => ({ conversion_percent: 100 * ratio(a.fulfilled, a.n), count: v(a, 'n') }),
    highlights: (a) => ({ average_fulfillment_rate: 100 * ratio(a.fulfilled, a.n), ...fulfilledTotals(a) }),
  },
  intentFulfillmentSentiment: {
    point: (a) => ({ count: v(a, 'fulfilled') }),
    highlights: (a) => ({
      positive_count: v(a, 'positive'),
      negative_count: v(a, 'negative'),
      neutral_count: v(a, 'neutral'),
      ...fulfilledTotals(a),
    }),
  },
  intentAcceptanceRate: {
    point: (a) => ({ conversion_percent: 100 * ratio(a.accepted, a.n), count: v(a, 'n') }),
    highlights: (a) => ({
      total_intents_offered: v(a, 'n'),
      unique_intents_offered: v(a, 'u_offered'),
      average_acceptance_rate: 100 * ratio(a.accepted, a.n),
    }),
  },
  attributeAcceptanceRate: {
    point: (a) => ({ conversion_percent: 100 * ratio(a.attrs_accepted, a.attrs), count: v(a, 'attrs') }),
    highlights: (a) => ({
      total_attributes_offered: v(a, 'attrs'),
      unique_attributes_offered: v(a, 'u_attrs'),
      average_acceptance_rate: 100 * ratio(a.attrs_accepted, a.attrs),
    }),
  },
  intentFulfillmentEfficiency: {
    point: (a) => ({ conversion_percent: 100 * ratio(a.one_turn, a.fulfilled) }),
    highlights: (a) => ({
      total_intents_fulfilled: v(a, 'fulfilled'),
      unique_intents_fulfilled: v(a, 'u_fulfilled'),
      average_number_turns_to_fulfill: ratio(a.turns_fulfilled, a.fulfilled),
    }),
  },
};

const DONE = 'function_errors = 0';

/** Every aggregate an analyse may read, by name; those starting `u_` are distinct counts, computed once. */
const AGGREGATES: Record<string, string> = {
  n: 'count(*)',
  fulfilled: `count(*) FILTER (WHERE ${DONE})`,
  turns_fulfilled: `coalesce(sum(turns) FILTER (WHERE ${DONE}), 0)`,
  one_turn: `count(*) FILTER (WHERE ${DONE} AND turns <= 1)`,
  accepted: 'count(*) FILTER (WHERE turns >= 2)',
  attrs: 'coalesce(sum(len(attrs)), 0)',
  attrs_accepted: 'coalesce(sum(len(attrs)) FILTER (WHERE turns >= 2), 0)',
  positive: `count(*) FILTER (WHERE ${DONE} AND sentiment = 'positive')`,
  negative: `count(*) FILTER (WHERE ${DONE} AND sentiment = 'negative')`,
  neutral: `count(*) FILTER (WHERE ${DONE} AND sentiment = 'neutral')`,
  u_offered: 'count(DISTINCT intent)',
  u_fulfilled: `count(DISTINCT intent) FILTER (WHERE ${DONE})`,
  u_attrs: 'len(list_distinct(flatten(list(attrs))))',
};

/** What each analyse reads: only those are computed (attribute lists and distinct counts are not free). */
const NEEDS: Record<IntentAnalyse, string[]> = {
  intentFulfillmentFriction: ['fulfilled', 'turns_fulfilled', 'u_fulfilled'],
  intentFulfillmentRate: ['n', 'fulfilled', 'u_fulfilled'],
  intentFulfillmentSentiment: ['fulfilled', 'positive', 'negative', 'neutral', 'u_fulfilled'],
  intentAcceptanceRate: ['n', 'accepted', 'u_offered'],
  attributeAcceptanceRate: ['attrs', 'attrs_accepted', 'u_attrs'],
  intentFulfillmentEfficiency: ['fulfilled', 'turns_fulfilled', 'one_turn', 'u_fulfilled'],
};

/** The summary fields the analyse's aggregates read (each named in their SQL). */
function fieldsOf(analyse: IntentAnalyse): SummaryField[] {
  const sql = NEEDS[analyse].map((n) => AGGREGATES[n]).join(' ');
  return (['turns', 'function_errors', 'sentiment'] as const).filter((f) => sql.includes(f));
}

function aggregatesSql(intents: string, analyse: IntentAnalyse, grouped: boolean): string {
  // `n` also ranks the groups (buildAnalysis): without it they came alphabetically (found by probing).
  const needs = grouped ? [...new Set(['n', ...NEEDS[analyse]])] : NEEDS[analyse];
  const sql = (name: string) => `(${AGGREGATES[name]})::DOUBLE`;
  const binned = needs.filter((n) => !n.startsWith('u_')).map((n) => `${sql(n)} AS ${n}`);
  const once = needs.filter((n) => n.startsWith('u_')).map((n): [string, string] => [sql(n), n]);
  return binnedAndWhole(intents, binned.join(', '), once);
}

export async function intentAnalysisChart(
  ctx: ChartContext,
  c: IntentAnalysisControls,
): Promise<AnalysisResponse> {
  const q = new Query();
  // The aggregates read no person: only user filters and groupBy need persons resolved.
  const intents = intentFacts(q, ctx, c, c.analyse === 'attributeAcceptanceRate', fieldsOf(c.analyse), {
    persons: false,
  });
  const sql = q.sql(aggregatesSql(intents, c.analyse, c.groupBy !== undefined));
  const rows = await ctx.db.all<AggRow>(sql, q.params.values);
  const encode = tokenEncoder(ctx, 'intent-analysis', c);
  const drill = (bin: number, grp: GroupKey | undefined) => {
    const point: DrillPoint = { chart: 'intent-analysis', bin };
    if (grp !== undefined) point.group = grp;
    return encode(point);
  };
  const shape = SHAPES[c.analyse];
  return analysisResponseSchema.parse(
    buildAnalysis(ctx, c.analyse, rows, c.groupBy, shape.point, shape.highlights, drill),
  );
}

export function intentAnalysisMembers(
  ctx: ChartContext,
  c: IntentAnalysisControls,
  point: Extract<DrillPoint, { chart: 'intent-analysis' }>,
): { q: Query; members: string } | undefined {
  const bin = ctx.bins[point.bin];
  if (!bin) return undefined;
  const q = new Query();
  const facts = intentFacts(q, ctx, c);
  const conditions = [`bin = ${q.params.bind(binKey(bin))}::DATE`];
  if (point.group !== undefined) conditions.push(groupIs(q.params, point.group));
  return { q, members: `SELECT person FROM ${facts} WHERE ${all(conditions)}` };
}
