import type { TraitGroup } from '../../shared/chart-filters.js';
import type { Scalar } from '../../shared/primitives.js';
import { firstEqualIndex, jsonValue, scalarText } from './property-filter.js';
import type { Params, Query } from './sql.js';

/**
 * Group-bys (decisions §6). With listed values, a row's group is the index of the first listed value
 * it equals (typed equality, as `eq`), and rows matching none are left out; every listed group is
 * shown, empty ones with zeros. Without listed values, the group is the value's text and the chart
 * shows the observed values, largest first, ties by label, at most MAX_GROUPS, then a last group
 * `(none)` of the rows that lack a value (no such key, JSON null, or an array or object), "in every
 * chart alike": its key is NULL in SQL and null in JS, so no stored text can be mistaken for it.
 */
export const MAX_GROUPS = 50;

export const NONE_LABEL = '(none)';

/** A row's group: a listed index or an observed value's text; null is the `(none)` group. */
export type GroupKey = string | null;

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
  /** The key rows carry (listed index, observed text, null for `(none)`): what a drilldown token names. */
  key: GroupKey;
  label: string;
}

/**
 * `WHERE` clause of a grouped chart's facts: with listed values, rows in none of them are left out;
 * observed groups keep every row, those lacking the value forming `(none)`.
 */
export function listedRowsOnly(values: ReadonlyArray<Scalar> | undefined, column = 'grp'): string {
  return grouping(values).listed ? `WHERE ${column} IS NOT NULL` : '';
}

/** The group key of a trait groupBy over the person row `t` (its `traits`); no groupBy: NULL. */
export function traitGroupKey(p: Params, g: TraitGroup | undefined): string {
  return g
    ? groupKeyExpr(p, grouping(g.trait_values), jsonValue(p, 't.traits', g.trait_name))
    : 'NULL::VARCHAR';
}

/** Rows of the heaviest observed groups (topGroupsCte) or of `(none)`. */
export function inShownGroups(top: string, column = 'grp'): string {
  return `(${column} IN (SELECT grp FROM ${top}) OR ${column} IS NULL)`;
}

/** The rows of one group, for a drilldown. */
export function groupIs(p: Params, key: GroupKey, column = 'grp'): string {
  return key === null ? `${column} IS NULL` : `${column} = ${p.bind(key)}`;
}

/** A map key for a (group, bin) pair that keeps `(none)` apart from an observed empty text. */
export function groupBinKey(grp: GroupKey | undefined, bin: string): string {
  return `${grp === undefined ? 'a' : grp === null ? 'n' : `v${grp}`}\u0000${bin}`;
}

/** Adds a row's weight to its group's (shownGroups' weights). */
export function addWeight(weights: Map<GroupKey, number>, grp: GroupKey, n: number): void {
  weights.set(grp, (weights.get(grp) ?? 0) + n);
}

/** Plain code-unit order, the same in every runtime (localeCompare is not). */
export function compareLabels(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The groups a chart shows, in order, given each observed key's weight (events, users, sessions);
 * `(none)` last when some rows lack the value.
 */
export function shownGroups(
  g: Grouping,
  weights: ReadonlyMap<GroupKey, number>,
  cap = MAX_GROUPS,
): ShownGroup[] {
  if (g.listed) return g.listed.map((value, i) => ({ key: String(i), label: labelOf(value) }));
  const observed: ShownGroup[] = [...weights.entries()]
    .filter((e): e is [string, number] => e[0] !== null)
    .sort(([a, wa], [b, wb]) => wb - wa || compareLabels(a, b))
    .slice(0, cap)
    .map(([key]) => ({ key, label: key }));
  return weights.has(null) ? [...observed, { key: null, label: NONE_LABEL }] : observed;
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
