import type { CompositionSlice, UserCompositionResponse } from '../shared/chart-responses.js';
import { bar, paint } from './bars.js';
import { block, type ChartRow, chartTable, count, formatNumber, formatPercent } from './chart-format.js';

/** User composition (decisions §6): one row per trait value with users, share and a bar. */

export const USER_COLUMNS = ['chart_name', 'group', 'label', 'value', 'percent'];

export function userRows(response: UserCompositionResponse): ChartRow[] {
  const rows: ChartRow[] = [];
  const push = (group: string, s: CompositionSlice) =>
    rows.push({ chart_name: response.chart_name, group, label: s.label, value: s.value, percent: s.percent });
  for (const slice of response.slices ?? []) push('', slice);
  for (const group of response.groups ?? []) for (const slice of group.slices) push(group.group, slice);
  return rows;
}

const users = (n: number) => count(n, 'user');

function slicesBlock(
  title: string,
  slices: readonly CompositionSlice[],
  traitName: string | undefined,
  color: boolean,
): string {
  const table = chartTable([traitName ?? 'Value', 'Users', 'Percent', ''], 'lrrl', color);
  const max = Math.max(0, ...slices.map((s) => s.percent));
  for (const s of slices) {
    table.push([
      s.label,
      formatNumber(s.value),
      formatPercent(s.percent),
      paint(bar(s.percent, max), 'cyan', color),
    ]);
  }
  const total = slices.reduce((a, s) => a + s.value, 0);
  const highlights = [`Total: ${users(total)} in ${count(slices.length, 'slice')}`];
  // First wins on ties, so the line names the slice listed first, as the table does.
  const largest = slices.reduce<CompositionSlice | undefined>(
    (a, s) => (a && a.value >= s.value ? a : s),
    undefined,
  );
  const smallest = slices.reduce<CompositionSlice | undefined>(
    (a, s) => (a && a.value <= s.value ? a : s),
    undefined,
  );
  if (largest && smallest && largest.value === smallest.value) {
    // A tie throughout (or one slice): naming one slice as both largest and smallest misreads as a lone winner.
    if (slices.length > 1)
      highlights.push(`Every slice: ${formatPercent(largest.percent)}, ${users(largest.value)}`);
  } else if (largest && smallest) {
    highlights.push(
      `Largest: ${largest.label} (${formatPercent(largest.percent)}, ${users(largest.value)}); smallest: ${smallest.label} (${formatPercent(smallest.percent)}, ${users(smallest.value)})`,
    );
  }
  return block(title, table, highlights, color);
}

export function userTables(
  response: UserCompositionResponse,
  names: { trait?: string | undefined; groupBy?: string | undefined },
  color: boolean,
): string {
  const blocks: string[] = [];
  if (response.slices) blocks.push(slicesBlock(response.chart_name, response.slices, names.trait, color));
  for (const group of response.groups ?? []) {
    const title = `${response.chart_name} · ${names.groupBy !== undefined ? `${names.groupBy} = ` : ''}${group.group}`;
    blocks.push(slicesBlock(title, group.slices, names.trait, color));
  }
  return blocks.length > 0 ? blocks.join('\n') : `${response.chart_name}\n  (no data)\n`;
}
