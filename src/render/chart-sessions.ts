import type { SessionChartResponse, SessionPoint } from '../shared/chart-responses.js';
import { bar, paint, sparkline } from './bars.js';
import {
  binLabel,
  block,
  type ChartRow,
  type ChartTableOptions,
  chartTable,
  count,
  formatNumber,
  humanDuration,
  periodName,
} from './chart-format.js';

/** Session chart (decisions §6): sessions, conversations and mean length per bin, per group. */

export const SESSION_COLUMNS = [
  'chart_name',
  'group',
  'start',
  'end',
  'sessions',
  'conversations',
  'average_length',
];

/** `session_ids` stay in `--format json`: a thousand ids per row would drown a CSV. */
export function sessionRows(response: SessionChartResponse): ChartRow[] {
  const rows: ChartRow[] = [];
  const push = (group: string, p: SessionPoint) =>
    rows.push({
      chart_name: response.chart_name,
      group,
      start: p.start,
      end: p.end,
      sessions: p.sessions,
      conversations: p.conversations,
      average_length: p.average_length,
    });
  for (const point of response.points ?? []) push('', point);
  for (const group of response.groups ?? []) for (const point of group.points) push(group.group, point);
  return rows;
}

function pointsBlock(title: string, points: readonly SessionPoint[], options: ChartTableOptions): string {
  const { period, tz, color } = options;
  const table = chartTable(
    [periodName(period), 'Sessions', 'Conversations', 'Avg length', ''],
    'lrrrl',
    color,
  );
  const counts = points.map((p) => p.sessions);
  const max = Math.max(0, ...counts);
  for (const p of points) {
    table.push([
      binLabel(p.start, period, tz),
      formatNumber(p.sessions),
      formatNumber(p.conversations),
      humanDuration(p.average_length),
      paint(bar(p.sessions, max), 'cyan', color),
    ]);
  }
  const sessions = counts.reduce((a, b) => a + b, 0);
  const conversations = points.reduce((a, p) => a + p.conversations, 0);
  // Weighted by sessions: the mean length of all sessions, not the mean of the bins' means.
  const seconds =
    sessions === 0 ? 0 : points.reduce((a, p) => a + p.average_length * p.sessions, 0) / sessions;
  return block(
    title,
    table,
    [
      `Total: ${count(sessions, 'session')}, ${count(conversations, 'conversation')}; average length ${humanDuration(seconds)}`,
      `Trend ${sparkline(counts)}`,
    ],
    color,
  );
}

export function sessionTables(
  response: SessionChartResponse,
  traitName: string | undefined,
  options: ChartTableOptions,
): string {
  const blocks: string[] = [];
  if (response.points) blocks.push(pointsBlock(response.chart_name, response.points, options));
  for (const group of response.groups ?? []) {
    const title = `${response.chart_name} · ${traitName !== undefined ? `${traitName} = ` : ''}${group.group}`;
    blocks.push(pointsBlock(title, group.points, options));
  }
  return blocks.length > 0 ? blocks.join('\n') : `${response.chart_name}\n  (no data)\n`;
}
