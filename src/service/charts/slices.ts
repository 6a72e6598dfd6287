import type { Slice } from '../../shared/analysis-responses.js';
import { POINT_BYTES } from './budget.js';
import type { ChartContext } from './context.js';
import { addWeight, compareLabels, type GroupKey } from './groups.js';

/**
 * Slices of the intent-distribution and sentiment charts: labels with a value each, percent the
 * share of the slices' total (0–100), every slice carrying the drilldown id of its persons.
 */

export type SliceRow = { grp: string | null; slice: string; n: number };

/** Observed labels, largest first, ties by label; or the fixed `labels` in order (zeros included). */
export function slicesOf(
  ctx: ChartContext,
  rows: ReadonlyArray<SliceRow>,
  drill: (slice: string) => string,
  labels?: ReadonlyArray<string>,
): Slice[] {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.slice, (counts.get(r.slice) ?? 0) + r.n);
  const shown = labels
    ? labels.map((label) => [label, counts.get(label) ?? 0] as const)
    : [...counts.entries()].sort(([a, na], [b, nb]) => nb - na || compareLabels(a, b));
  const total = shown.reduce((s, [, n]) => s + n, 0);
  return shown.map(([label, value]) => {
    const id = drill(label);
    ctx.budget.point(POINT_BYTES + id.length + label.length);
    return { label, value, percent: total === 0 ? 0 : (100 * value) / total, drilldown_id: id };
  });
}

/** Weights of the groups (for shownGroups): the summed values of their rows. */
export function groupWeights(rows: ReadonlyArray<SliceRow>): Map<GroupKey, number> {
  const weights = new Map<GroupKey, number>();
  for (const r of rows) addWeight(weights, r.grp, r.n);
  return weights;
}
