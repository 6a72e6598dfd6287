import {
  type IntentDistributionResponse,
  intentDistributionResponseSchema,
} from '../../shared/analysis-responses.js';
import type { IntentDistributionControls } from '../../shared/chart-controls.js';
import type { ChartContext } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { INTENT_EVENT } from './event-filter.js';
import {
  type GroupKey,
  groupIs,
  grouping,
  inShownGroups,
  shownGroups,
  topGroupsCte,
  traitGroupKey,
} from './groups.js';
import { eventScan, personsCte } from './scan.js';
import { groupWeights, type SliceRow, slicesOf } from './slices.js';
import { all, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * Intent distribution (analysis-controls.ts INTENT_DISTRIBUTION_DESCRIPTION): per intent, the
 * conversations, as (session_id, conversation_id) pairs, with an `Intent Informed` event of it in
 * the range. Persons are the events' persons, after the user filters.
 */

export const CHART_NAME = 'Intents';

/** CTE `facts`: one row per (session_id, conversation_id, intent, grp), with the person. */
function intentFacts(q: Query, ctx: ChartContext, c: IntentDistributionControls): string {
  const p = q.params;
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  const g = c.groupBy;
  const grp = traitGroupKey(p, g);
  const where = [
    `s.event = ${p.bind(INTENT_EVENT)}`,
    's.conversation_id IS NOT NULL',
    's.person IS NOT NULL',
    ...selectedCondition(selected, 's.person'),
  ];
  return q.cte(
    'facts',
    `SELECT * FROM (SELECT s.session_id, s.conversation_id, s.person,
        json_extract_string(s.properties, '/intent') AS slice, ${grp} AS grp
      FROM ${eventScan(q, ctx, ctx.window)} s ${g ? `LEFT JOIN ${personsCte(q, ctx)} t ON t.person = s.person` : ''}
      WHERE ${all(where)}) WHERE ${all(['slice IS NOT NULL', ...(grouping(g?.trait_values).listed ? ['grp IS NOT NULL'] : [])])}`,
  );
}

export async function intentDistributionChart(
  ctx: ChartContext,
  c: IntentDistributionControls,
): Promise<IntentDistributionResponse> {
  const q = new Query();
  const facts = intentFacts(q, ctx, c);
  const observed = c.groupBy !== undefined && grouping(c.groupBy.trait_values).listed === undefined;
  const pairs = q.cte('pairs', `SELECT DISTINCT session_id, conversation_id, slice, grp FROM ${facts}`);
  const top = observed ? topGroupsCte(q, pairs, 'count(*)') : undefined;
  const rows = await ctx.db.all<SliceRow>(
    q.sql(`SELECT grp, slice, count(*)::DOUBLE AS n FROM ${pairs}
      ${top ? `WHERE ${inShownGroups(top)}` : ''} GROUP BY ALL`),
    q.params.values,
  );
  const encode = tokenEncoder(ctx, 'intent-distribution', c);
  const drill = (grp: GroupKey | undefined) => (slice: string) => {
    const point: DrillPoint = { chart: 'intent-distribution', slice };
    if (grp !== undefined) point.group = grp;
    return encode(point);
  };
  if (!c.groupBy) {
    const slices = slicesOf(ctx, rows, drill(undefined));
    const percents = slices.map((s) => s.percent);
    const values = slices.map((s) => s.value);
    const none = slices.length === 0;
    const highlights = {
      max_percent: none ? 0 : Math.max(...percents),
      min_percent: none ? 0 : Math.min(...percents),
      max_count: none ? 0 : Math.max(...values),
      min_count: none ? 0 : Math.min(...values),
    };
    return intentDistributionResponseSchema.parse({ chart_name: CHART_NAME, slices, highlights });
  }
  const groups = shownGroups(grouping(c.groupBy.trait_values), groupWeights(rows)).map((g) => ({
    group: g.label,
    slices: slicesOf(
      ctx,
      rows.filter((r) => r.grp === g.key),
      drill(g.key),
    ),
  }));
  return intentDistributionResponseSchema.parse({ chart_name: CHART_NAME, groups });
}

export function intentDistributionMembers(
  ctx: ChartContext,
  c: IntentDistributionControls,
  point: Extract<DrillPoint, { chart: 'intent-distribution' }>,
): { q: Query; members: string } {
  const q = new Query();
  const facts = intentFacts(q, ctx, c);
  const conditions = [`slice = ${q.params.bind(point.slice)}`];
  if (point.group !== undefined) conditions.push(groupIs(q.params, point.group));
  return { q, members: `SELECT person FROM ${facts} WHERE ${all(conditions)}` };
}
