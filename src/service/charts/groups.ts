import type { Scalar } from '../../shared/primitives.js';
import { firstEqualIndex, scalarText } from './property-filter.js';
import type { Params, Query } from './sql.js';

/**
 * Group-bys (decisions §6). With listed values, a row's group is the index of the first listed value
 * it equals (typed equality, as `eq`), and rows matching none are left out; every listed group is
 * shown, empty ones with zeros. Without listed values, the group is the value's text and the chart
 * shows the observed values, largest first, ties by label, at most MAX_GROUPS.
 */
export const MAX_GROUPS = 50;

export interface Grouping {
  /** The listed values, or undefined when groups are the observed values. */
  listed: ReadonlyArray<Scalar> | undefined;
}

export function grouping(values: ReadonlyArray<Scalar> | undefined): Grouping {
  return { listed: values !== undefined && values.length > 0 ? values : undefined };
}

/** SQL giving a row's group key (VARCHAR) from the JSON value `v`: a listed index or the value's text. */
export function groupKeyExpr(p: Params, g: Grouping, v: string): string {
  if (!g.listed) return scalarText(v);
  // One lookup, not a WHEN per value: 2,000 listed values made 6,000 reads of `v` per row, which
  // took DuckDB's whole memory limit (and an ingest COMMIT with it) on a few hundred thousand events.
  return `(${firstEqualIndex(p, v, g.listed)})::VARCHAR`;
}

/** The label a chart shows for a scalar: `true`, `1.5`, the string itself. */
export function labelOf(value: Scalar): string {
  return String(value);
}

export interface ShownGroup {
  /** The key rows carry (listed index or observed text): what a drilldown token names. */
  key: string;
  label: string;
}

/** Plain code-unit order, the same in every runtime (localeCompare is not). */
export function compareLabels(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The groups a chart shows, in order, given each observed key's weight (events, users, sessions). */
export function shownGroups(
  g: Grouping,
  weights: ReadonlyMap<string, number>,
  cap = MAX_GROUPS,
): ShownGroup[] {
  if (g.listed) return g.listed.map((value, i) => ({ key: String(i), label: labelOf(value) }));
  return [...weights.entries()]
    .sort(([a, wa], [b, wb]) => wb - wa || compareLabels(a, b))
    .slice(0, cap)
    .map(([key]) => ({ key, label: key }));
}

/**
 * A CTE of the heaviest observed groups of `source` (column grp), so a chart over a property with a
 * million values never ships a million groups back; `weight` is an aggregate over source rows.
 */
export function topGroupsCte(q: Query, source: string, weight: string, cap = MAX_GROUPS): string {
  return q.cte(
    q.fresh('top'),
    `SELECT grp FROM ${source} WHERE grp IS NOT NULL GROUP BY grp ORDER BY ${weight} DESC, grp LIMIT ${cap}`,
  );
}
