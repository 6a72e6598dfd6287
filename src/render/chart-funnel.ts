import type { FunnelResponse, FunnelStep } from '../shared/analysis-responses.js';
import { bar, paint } from './bars.js';
import { block, type ChartRow, chartTable, count, formatNumber, formatPercent } from './chart-format.js';

/** Funnel: one row per step with the persons who reached it, their share of step 1 and a bar. */

export const FUNNEL_COLUMNS = ['chart_name', 'group', 'step', 'event', 'count', 'percent'];

export function funnelRows(response: FunnelResponse): ChartRow[] {
  const rows: ChartRow[] = [];
  const push = (group: string, steps: readonly FunnelStep[]) => {
    for (const [i, s] of steps.entries()) {
      rows.push({
        chart_name: response.chart_name,
        group,
        step: i + 1,
        event: s.event,
        count: s.count,
        percent: s.percent,
      });
    }
  };
  push('', response.events ?? []);
  for (const g of response.groups ?? []) push(g.group, g.events);
  return rows;
}

function stepsBlock(title: string, steps: readonly FunnelStep[], color: boolean): string {
  const table = chartTable(['Step', 'Event', 'Users', 'Of step 1', ''], 'lrrrl', color);
  steps.forEach((s, i) => {
    table.push([
      String(i + 1),
      s.event,
      formatNumber(s.count),
      formatPercent(s.percent),
      paint(bar(s.percent, 100), 'cyan', color),
    ]);
  });
  const first = steps[0]?.count ?? 0;
  const last = steps.at(-1)?.count ?? 0;
  const rate = first === 0 ? 0 : (100 * last) / first;
  return block(
    title,
    table,
    [`Entered: ${count(first, 'user')}; converted: ${count(last, 'user')} (${formatPercent(rate)})`],
    color,
  );
}

export function funnelTables(response: FunnelResponse, groupBy: string | undefined, color: boolean): string {
  const blocks: string[] = [];
  if (response.events) blocks.push(stepsBlock(response.chart_name, response.events, color));
  for (const g of response.groups ?? []) {
    blocks.push(
      stepsBlock(
        `${response.chart_name} · ${groupBy !== undefined ? `${groupBy} = ` : ''}${g.group}`,
        g.events,
        color,
      ),
    );
  }
  return blocks.length > 0 ? blocks.join('\n') : `${response.chart_name}\n  (no data)\n`;
}
