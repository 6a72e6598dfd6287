import { type SentimentResponse, sentimentResponseSchema } from '../../shared/analysis-responses.js';
import type { SentimentAnalysisControls } from '../../shared/chart-controls.js';
import { EVENT_NAMES } from '../../shared/event-names.js';
import type { ChartContext } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { countCondition, intentMatcher, windowCondition } from './event-filter.js';
import {
  type GroupKey,
  groupIs,
  grouping,
  inShownGroups,
  listedRowsOnly,
  shownGroups,
  topGroupsCte,
  traitGroupKey,
} from './groups.js';
import { eventScan, personsCte, ScanValues } from './scan.js';
import { groupWeights, type SliceRow, slicesOf } from './slices.js';
import { all, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * Sentiment analysis (analysis-controls.ts SENTIMENT_DESCRIPTION): conversations, as (session_id,
 * conversation_id) pairs, whose `Conversation Summary` is in the range, split by the summary's
 * sentiment, keeping those whose count of `Intent Informed` events matching intentFilter (in its
 * window) satisfies its number_of rule. A conversation with several summaries counts its latest.
 */

export const CHART_NAME = 'Sentiment';
export const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

/** CTE `facts`: session_id, conversation_id, person, slice (the sentiment), grp. */
function sentimentFacts(q: Query, ctx: ChartContext, c: SentimentAnalysisControls): string {
  const p = q.params;
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  const values = new ScanValues(p);
  const m = intentMatcher(p, ctx, c.intentFilter, values);
  const matches = q.cte(
    'matches',
    `SELECT s.session_id, s.conversation_id, count(*)::DOUBLE AS n FROM ${eventScan(q, ctx, m.window, values)} s
     WHERE ${all([m.condition, windowCondition(p, m.window), 's.conversation_id IS NOT NULL'])}
     GROUP BY s.session_id, s.conversation_id`,
  );
  const summaries = q.cte(
    'summaries',
    `SELECT s.session_id, s.conversation_id, s.person, json_extract_string(s.properties, '/sentiment') AS slice
     FROM ${eventScan(q, ctx, ctx.window)} s
     WHERE ${all([`s.event = ${p.bind(EVENT_NAMES.conversationSummary)}`, 's.conversation_id IS NOT NULL', 's.person IS NOT NULL'])}
     QUALIFY row_number() OVER (PARTITION BY s.session_id, s.conversation_id ORDER BY s.ts DESC) = 1`,
  );
  const g = c.groupBy;
  const grp = traitGroupKey(p, g);
  const where = [
    `x.slice IN (${SENTIMENTS.map((s) => p.bind(s)).join(', ')})`,
    countCondition(p, 'coalesce(mt.n, 0)', m.op, m.n),
    ...selectedCondition(selected, 'x.person'),
  ];
  return q.cte(
    'facts',
    `SELECT * FROM (SELECT x.session_id, x.conversation_id, x.person, x.slice, ${grp} AS grp FROM ${summaries} x
       LEFT JOIN ${matches} mt ON mt.session_id IS NOT DISTINCT FROM x.session_id AND mt.conversation_id = x.conversation_id
       ${g ? `LEFT JOIN ${personsCte(q, ctx)} t ON t.person = x.person` : ''}
       WHERE ${all(where)}) ${listedRowsOnly(g?.trait_values)}`,
  );
}

function highlightsOf(slices: ReadonlyArray<{ label: string; value: number; percent: number }>) {
  const of = (label: string) => slices.find((s) => s.label === label) ?? { value: 0, percent: 0 };
  return {
    positive_percent: of('positive').percent,
    positive_total: of('positive').value,
    negative_percent: of('negative').percent,
    negative_total: of('negative').value,
    neutral_percent: of('neutral').percent,
    neutral_total: of('neutral').value,
  };
}

export async function sentimentChart(
  ctx: ChartContext,
  c: SentimentAnalysisControls,
): Promise<SentimentResponse> {
  const q = new Query();
  const facts = sentimentFacts(q, ctx, c);
  const observed = c.groupBy !== undefined && grouping(c.groupBy.trait_values).listed === undefined;
  const top = observed ? topGroupsCte(q, facts, 'count(*)') : undefined;
  const rows = await ctx.db.all<SliceRow>(
    q.sql(`SELECT grp, slice, count(*)::DOUBLE AS n FROM ${facts}
      ${top ? `WHERE ${inShownGroups(top)}` : ''} GROUP BY ALL`),
    q.params.values,
  );
  const encode = tokenEncoder(ctx, 'sentiment-analysis', c);
  const drill = (grp: GroupKey | undefined) => (slice: string) => {
    const point: DrillPoint = { chart: 'sentiment-analysis', slice };
    if (grp !== undefined) point.group = grp;
    return encode(point);
  };
  if (!c.groupBy) {
    const slices = slicesOf(ctx, rows, drill(undefined), SENTIMENTS);
    return sentimentResponseSchema.parse({
      chart_name: CHART_NAME,
      slices,
      highlights: highlightsOf(slices),
    });
  }
  const groups = shownGroups(grouping(c.groupBy.trait_values), groupWeights(rows)).map((g) => ({
    group: g.label,
    slices: slicesOf(
      ctx,
      rows.filter((r) => r.grp === g.key),
      drill(g.key),
      SENTIMENTS,
    ),
  }));
  return sentimentResponseSchema.parse({ chart_name: CHART_NAME, groups });
}

export function sentimentMembers(
  ctx: ChartContext,
  c: SentimentAnalysisControls,
  point: Extract<DrillPoint, { chart: 'sentiment-analysis' }>,
): { q: Query; members: string } {
  const q = new Query();
  const facts = sentimentFacts(q, ctx, c);
  const conditions = [`slice = ${q.params.bind(point.slice)}`];
  if (point.group !== undefined) conditions.push(groupIs(q.params, point.group));
  return { q, members: `SELECT person FROM ${facts} WHERE ${all(conditions)}` };
}
