import type { Measure } from '../../shared/chart-measure.js';

/**
 * Segmentation measures (our extension, shared/chart-measure.ts) as SQL. The value is read like a
 * filter reads a property (event property, then the user's trait: a ScanValues column) and counts
 * only when it is a JSON number; the aggregate ignores the rest, as SQL aggregates ignore NULL.
 */

/** The JSON value `v` as a DOUBLE when it is a number, else NULL (cheap first-character test, as property-filter.ts). */
export function numericValue(v: string): string {
  return `CASE WHEN ${v}::VARCHAR >= '-' AND ${v}::VARCHAR < ':' THEN TRY_CAST(${v} AS DOUBLE) END`;
}

/**
 * Fixed SQL per aggregate over the column `val`; the percentile fractions are constants of this file.
 * Sums and means are compensated (Kahan): a plain double sum depends on the order rows are added in,
 * and the same costs stored by one import or by an interrupted and resumed one charted
 * 34.8544697499999 and 34.85446975 (found by probing).
 */
const AGGREGATES: Record<Exclude<Measure['aggregate'], 'count'>, string> = {
  sum: 'coalesce(fsum(val), 0)',
  avg: 'favg(val)',
  min: 'min(val)',
  max: 'max(val)',
  p50: 'quantile_cont(val, 0.5)',
  p90: 'quantile_cont(val, 0.9)',
  p95: 'quantile_cont(val, 0.95)',
  p99: 'quantile_cont(val, 0.99)',
};

/** The measure when it is not a plain count (the spec's chart needs no value column). */
export function valueMeasure(m: Measure | undefined): (Measure & { property_name: string }) | undefined {
  if (!m || m.aggregate === 'count' || m.property_name === undefined) return undefined;
  return { ...m, property_name: m.property_name };
}

export function aggregateSql(m: Measure): string {
  return m.aggregate === 'count' ? 'count(*)' : AGGREGATES[m.aggregate];
}

/** How a response names the measure: `p95:completion_tokens`. */
export function measureLabel(m: Measure & { property_name: string }): string {
  return `${m.aggregate}:${m.property_name}`;
}
