import type { Slice } from '../shared/analysis-responses.js';
import { bar, paint } from './bars.js';
import { block, type ChartRow, chartTable, count, formatNumber, formatPercent } from './chart-format.js';

/** Intent distribution and sentiment: one row per slice with its conversations, share and a bar. */

export const SLICE_COLUMNS = ['chart_name', 'group', 'label', 'value', 'percent'];

interface Sliced {
  chart_name: string;
  slices?: Slice[] | undefined;
  groups?: Array<{ group: string; slices: Slice[] }> | undefined;
}

export function sliceRows(response: Sliced): ChartRow[] {
  const rows: ChartRow[] = [];
  const push = (group: string, s: Slice) =>
    rows.push({ chart_name: response.chart_name, group, label: s.label, value: s.value, percent: s.percent });
  for (const s of response.slices ?? []) push('', s);
  for (const g of response.groups ?? []) for (const s of g.slices) push(g.group, s);
  return rows;
}

function slicesBlock(title: string, slices: readonly Slice[], heading: string, color: boolean): string {
  const table = chartTable([heading, 'Conversations', 'Percent', ''], 'lrrl', color);
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
  // A conversation shows one sentiment but may show several intents: the intents' sum counted such a
  // conversation once per intent, as that many conversations (found by probing).
  const footer =
    heading === 'Intent'
      ? `Total: ${formatNumber(total)} (a conversation counts once for each intent it showed)`
      : `Total: ${count(total, 'conversation')}`;
  return block(title, table, [footer], color);
}

export function sliceTables(
  response: Sliced,
  heading: string,
  groupBy: string | undefined,
  color: boolean,
): string {
  const blocks: string[] = [];
  if (response.slices) blocks.push(slicesBlock(response.chart_name, response.slices, heading, color));
  for (const g of response.groups ?? []) {
    const title = `${response.chart_name} · ${groupBy !== undefined ? `${groupBy} = ` : ''}${g.group}`;
    blocks.push(slicesBlock(title, g.slices, heading, color));
  }
  return blocks.length > 0 ? blocks.join('\n') : `${response.chart_name}\n  (no data)\n`;
}
