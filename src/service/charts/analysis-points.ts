import type { AnalysisPoint, AnalysisResponse } from '../../shared/analysis-responses.js';
import type { TraitGroup } from '../../shared/chart-filters.js';
import { POINT_BYTES } from './budget.js';
import { binKey, type ChartContext } from './context.js';
import { exactDigits } from './digits.js';
import { addWeight, type GroupKey, groupBinKey, grouping, shownGroups } from './groups.js';

/**
 * Points of the conversation and intent analyses: one per bin (empty bins with zeros), per group
 * with a trait groupBy. Rows come from binnedAndWhole: the row whose `whole` is 1 is the whole
 * chart, which the highlights are computed from.
 */

export type Aggregates = Record<string, number>;
export type AggRow = Aggregates & { bin: string | null; grp: string | null; whole: number };

/**
 * The aggregates per (bin, grp) and once more over everything, as one statement. A UNION ALL, not
 * GROUPING SETS: with DISTINCT aggregates DuckDB's grouping sets took 6x the time of both parts.
 */
export function binnedAndWhole(
  from: string,
  aggregates: string,
  wholeOnly: ReadonlyArray<[string, string]> = [],
): string {
  // Aggregates only the highlights use (distinct counts) run once, over everything.
  const none = wholeOnly.map(([, name]) => `, NULL::DOUBLE AS ${name}`).join('');
  const once = wholeOnly.map(([sql]) => `, ${sql}`).join('');
  return `SELECT bin::VARCHAR AS bin, grp, 0::DOUBLE AS whole, ${aggregates}${none} FROM ${from} GROUP BY bin, grp
    UNION ALL SELECT NULL, NULL, 1::DOUBLE, ${aggregates}${once} FROM ${from}`;
}

/** a / b, 0 when b is 0 (decisions §6: a zero denominator gives 0). */
export function ratio(a: number | undefined, b: number | undefined): number {
  return !b ? 0 : (a ?? 0) / b;
}

/** A row's sums without a double's noise (digits.ts): the same data gave two answers. */
function tidy(row: AggRow): AggRow {
  const out = { ...row };
  for (const [k, v] of Object.entries(row)) if (typeof v === 'number') out[k] = exactDigits(v);
  return out;
}

export function buildAnalysis(
  ctx: ChartContext,
  chartName: string,
  given: ReadonlyArray<AggRow>,
  groupBy: TraitGroup | undefined,
  fields: (a: Aggregates) => Partial<AnalysisPoint>,
  highlights: (a: Aggregates) => Record<string, number>,
  drill: (bin: number, grp: GroupKey | undefined) => string,
): AnalysisResponse {
  const rows = given.map(tidy);
  const whole = rows.find((r) => Number(r.whole) === 1) ?? {};
  const byKey = new Map(
    rows
      .filter((r) => Number(r.whole) !== 1)
      .map((r) => [groupBinKey(groupBy ? r.grp : undefined, r.bin ?? ''), r as Aggregates]),
  );
  const pointsOf = (grp: GroupKey | undefined): AnalysisPoint[] =>
    ctx.bins.map((bin, b) => {
      const id = drill(b, grp);
      ctx.budget.point(POINT_BYTES + id.length);
      const row = byKey.get(groupBinKey(grp, binKey(bin))) ?? {};
      return { start: bin.startIso, end: bin.endIso, drilldown_id: id, ...fields(row) };
    });
  if (!groupBy) return { chart_name: chartName, points: pointsOf(undefined), highlights: highlights(whole) };
  const weights = new Map<GroupKey, number>();
  for (const r of rows) if (Number(r.whole) !== 1) addWeight(weights, r.grp, r.n ?? 0);
  const groups = shownGroups(grouping(groupBy.trait_values), weights).map((g) => ({
    group: g.label,
    points: pointsOf(g.key),
  }));
  return { chart_name: chartName, groups, highlights: highlights(whole) };
}
