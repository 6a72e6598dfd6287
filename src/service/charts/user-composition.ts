import type { UserCompositionControls } from '../../shared/chart-controls.js';
import {
  type CompositionSlice,
  type UserCompositionResponse,
  userCompositionResponseSchema,
} from '../../shared/chart-responses.js';
import { POINT_BYTES } from './budget.js';
import type { ChartContext } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import {
  addWeight,
  compareLabels,
  type GroupKey,
  groupIs,
  grouping,
  groupKeyExpr,
  inShownGroups,
  NONE_LABEL,
  shownGroups,
  topGroupsCte,
  traitGroupKey,
} from './groups.js';
import { jsonValue } from './property-filter.js';
import { eventScan, personsCte } from './scan.js';
import { all, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * User composition (decisions §6): persons with at least one stored event in the range (generated
 * events included), after filters, split by `selectedTrait`. Listed trait_values give one slice each,
 * in order; otherwise every observed value, largest first, ties by label, then a "(none)" slice for
 * persons without the trait. `groupBy` splits the persons by another trait first (groups.ts).
 */

/** CTE `facts`: person, slice (key, or NULL for "no value"), grp. */
function compositionFacts(q: Query, ctx: ChartContext, c: UserCompositionControls): string {
  const p = q.params;
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  const active = q.cte(
    'active',
    `SELECT DISTINCT s.person FROM ${eventScan(q, ctx, ctx.window)} s
     WHERE ${all(['s.person IS NOT NULL', ...selectedCondition(selected, 's.person')])}`,
  );
  const slices = grouping(c.selectedTrait.trait_values);
  const slice = groupKeyExpr(p, slices, jsonValue(p, 't.traits', c.selectedTrait.trait_name));
  const g = c.groupBy;
  const grp = traitGroupKey(p, g);
  const keep = [
    ...(slices.listed ? ['slice IS NOT NULL'] : []),
    ...(grouping(g?.trait_values).listed ? ['grp IS NOT NULL'] : []),
  ];
  return q.cte(
    'facts',
    `SELECT * FROM (SELECT a.person, ${slice} AS slice, ${grp} AS grp
       FROM ${active} a LEFT JOIN ${personsCte(q, ctx)} t ON t.person = a.person) WHERE ${all(keep)}`,
  );
}

type Row = {
  grp: string | null;
  slice: string | null;
  n: number;
};

function slicesOf(
  c: UserCompositionControls,
  rows: ReadonlyArray<Row>,
  drill: (slice: string | null) => string,
): CompositionSlice[] {
  const counts = new Map<string | null, number>();
  for (const r of rows) counts.set(r.slice, (counts.get(r.slice) ?? 0) + r.n);
  const g = grouping(c.selectedTrait.trait_values);
  const shown: Array<{ key: string | null; label: string; value: number }> = g.listed
    ? shownGroups(g, new Map()).map((s) => ({ ...s, value: counts.get(s.key) ?? 0 }))
    : [...counts.entries()]
        .filter((e): e is [string, number] => e[0] !== null)
        .sort(([a, na], [b, nb]) => nb - na || compareLabels(a, b))
        .map(([key, value]) => ({ key, label: key, value }));
  const none = counts.get(null);
  if (!g.listed && none !== undefined) shown.push({ key: null, label: NONE_LABEL, value: none });
  const total = shown.reduce((s, x) => s + x.value, 0);
  return shown.map((s) => ({
    label: s.label,
    value: s.value,
    percent: total === 0 ? 0 : (100 * s.value) / total,
    drilldown_id: drill(s.key),
  }));
}

export async function userCompositionChart(
  ctx: ChartContext,
  c: UserCompositionControls,
): Promise<UserCompositionResponse> {
  const q = new Query();
  const facts = compositionFacts(q, ctx, c);
  const observed = c.groupBy !== undefined && grouping(c.groupBy.trait_values).listed === undefined;
  const top = observed ? topGroupsCte(q, facts, 'count(*)') : undefined;
  const rows = await ctx.db.all<Row>(
    q.sql(`SELECT grp, slice, count(*)::DOUBLE AS n FROM ${facts}
      ${top ? `WHERE ${inShownGroups(top)}` : ''} GROUP BY ALL`),
    q.params.values,
  );
  const encode = tokenEncoder(ctx, 'user-composition', c);
  const drill = (grp: GroupKey | undefined) => (slice: string | null) => {
    const point: DrillPoint = { chart: 'user-composition', slice };
    if (grp !== undefined) point.group = grp;
    const id = encode(point);
    ctx.budget.point(POINT_BYTES + id.length + (slice?.length ?? 0));
    return id;
  };
  const chart_name = c.selectedTrait.trait_name;
  if (!c.groupBy) {
    const slices = slicesOf(c, rows, drill(undefined));
    const percents = slices.map((s) => s.percent);
    const values = slices.map((s) => s.value);
    const highlights = {
      max_percent: slices.length === 0 ? 0 : Math.max(...percents),
      min_percent: slices.length === 0 ? 0 : Math.min(...percents),
      max_count: slices.length === 0 ? 0 : Math.max(...values),
      min_count: slices.length === 0 ? 0 : Math.min(...values),
    };
    return userCompositionResponseSchema.parse({ chart_name, slices, highlights });
  }
  const weights = new Map<GroupKey, number>();
  for (const r of rows) addWeight(weights, r.grp, r.n);
  const groups = shownGroups(grouping(c.groupBy.trait_values), weights).map((g) => ({
    group: g.label,
    slices: slicesOf(
      c,
      rows.filter((r) => r.grp === g.key),
      drill(g.key),
    ),
  }));
  return userCompositionResponseSchema.parse({ chart_name, groups });
}

export function compositionMembers(
  ctx: ChartContext,
  c: UserCompositionControls,
  point: Extract<DrillPoint, { chart: 'user-composition' }>,
): { q: Query; members: string } {
  const q = new Query();
  const facts = compositionFacts(q, ctx, c);
  const p = q.params;
  const conditions = [point.slice === null ? 'slice IS NULL' : `slice = ${p.bind(point.slice)}`];
  if (point.group !== undefined) conditions.push(groupIs(p, point.group));
  return { q, members: `SELECT person FROM ${facts} WHERE ${all(conditions)}` };
}
