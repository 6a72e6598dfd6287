import type { RetentionControls } from '../../shared/chart-controls.js';
import type { RetentionCell, RetentionResult } from '../../shared/chart-responses.js';
import { POINT_BYTES } from './budget.js';
import { binKey, type ChartContext } from './context.js';
import type { DrillPoint } from './drilldown-token.js';
import { addWeight, type GroupKey, grouping, shownGroups } from './groups.js';

/**
 * Lays retention counts out as decisions §6 describes: row i has a cell for each bin from i to the
 * last (triangular); cell 0 is the cohort (100%); column headers sum each column and average it
 * over the rows that reach it; total_users sums the cohorts.
 */

/** What retention SQL returns: cohort sizes (rb NULL) and returning persons per (cohort bin, return bin). */
export type RetentionRow = {
  grp: string | null;
  cb: string;
  rb: string | null;
  n: number;
};

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : (100 * part) / whole;
}

function layout(
  ctx: ChartContext,
  rows: ReadonlyArray<RetentionRow>,
  cell: (row: number, col: number) => string,
): Omit<RetentionResult, 'chart_name'> {
  const sizes = new Map<string, number>();
  const returned = new Map<string, number>();
  for (const r of rows) {
    if (r.rb === null) sizes.set(r.cb, r.n);
    else returned.set(`${r.cb}|${r.rb}`, r.n);
  }
  const keys = ctx.bins.map(binKey);
  const n = keys.length;
  const rowHeaders = keys.map((k) => sizes.get(k) ?? 0);
  const colCount = new Array<number>(n).fill(0);
  const colBase = new Array<number>(n).fill(0);
  const grid: RetentionCell[][] = rowHeaders.map((size, i) => {
    const cells: RetentionCell[] = [];
    for (let j = 0; i + j < n; j++) {
      const bin = ctx.bins[i + j]!;
      const count = j === 0 ? size : (returned.get(`${keys[i]}|${keys[i + j]}`) ?? 0);
      colCount[j]! += count;
      colBase[j]! += size;
      const id = cell(i, j);
      ctx.budget.point(POINT_BYTES + id.length);
      cells.push({
        start: bin.startIso,
        end: bin.endIso,
        count,
        percent: percent(count, size),
        drilldown_id: id,
      });
    }
    return cells;
  });
  return {
    rows: grid,
    column_headers: colCount.map((count, j) => ({ count, average: percent(count, colBase[j]!) })),
    row_headers: rowHeaders,
    total_users: rowHeaders.reduce((a, b) => a + b, 0),
  };
}

export function retentionResults(
  ctx: ChartContext,
  c: RetentionControls,
  rows: ReadonlyArray<RetentionRow>,
  encode: (point: DrillPoint) => string,
): RetentionResult[] {
  const drill = (group: GroupKey | undefined) => (row: number, col: number) => {
    const point: DrillPoint = { chart: 'retention', row, col };
    if (group !== undefined) point.group = group;
    return encode(point);
  };
  const g = c.groupBy;
  if (!g) return [{ chart_name: c.startingEvent.event_name, ...layout(ctx, rows, drill(undefined)) }];
  const weights = new Map<GroupKey, number>();
  for (const r of rows) if (r.rb === null) addWeight(weights, r.grp, r.n);
  return shownGroups(grouping(g.trait_values), weights).map((group) => ({
    chart_name: `${g.trait_name} = ${group.label}`,
    ...layout(
      ctx,
      rows.filter((r) => r.grp === group.key),
      drill(group.key),
    ),
  }));
}
