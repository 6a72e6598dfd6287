import type { RetentionCell, RetentionResponse, RetentionResult } from '../shared/chart-responses.js';
import { paint, type Style } from './bars.js';
import {
  binLabel,
  block,
  type ChartRow,
  type ChartTableOptions,
  chartTable,
  formatPercent,
  periodName,
} from './chart-format.js';

/**
 * Retention (decisions §6) as the classic cohort triangle: a row per cohort (its bin and size), a
 * column per period after it, percentages of the cohort (counts too with -v), and the column
 * averages underneath.
 */

export const RETENTION_COLUMNS = [
  'chart_name',
  'cohort_start',
  'cohort_users',
  'period',
  'start',
  'end',
  'count',
  'percent',
];

export function retentionRows(response: RetentionResponse): ChartRow[] {
  const rows: ChartRow[] = [];
  for (const result of response) {
    (result.rows ?? []).forEach((row, i) => {
      row.forEach((cell, j) => {
        rows.push({
          chart_name: result.chart_name,
          cohort_start: row[0]?.start ?? cell.start,
          cohort_users: result.row_headers[i] ?? 0,
          period: j,
          start: cell.start,
          end: cell.end,
          count: cell.count,
          percent: cell.percent,
        });
      });
    });
  }
  return rows;
}

/** Warmer for better retention, so a glance finds the strong cohorts; column 0 is always 100%. */
function tier(percent: number): Style | undefined {
  if (percent >= 50) return 'green';
  if (percent >= 20) return 'yellow';
  return undefined;
}

function cellText(percent: number, count: number, options: ChartTableOptions): string {
  const text = options.verbose ? `${formatPercent(percent)} (${count})` : formatPercent(percent);
  const style = tier(percent);
  return style ? paint(text, style, options.color) : text;
}

function resultBlock(result: RetentionResult, options: ChartTableOptions): string {
  const { period, tz, color } = options;
  const rows = result.rows ?? [];
  const width = Math.max(result.column_headers.length, ...rows.map((r) => r.length));
  const name = periodName(period);
  const head = ['Cohort', 'Users', ...Array.from({ length: width }, (_, j) => `${name} ${j}`)];
  const table = chartTable(head, `lr${'r'.repeat(width)}`, color);
  rows.forEach((row: RetentionCell[], i) => {
    const first = row[0];
    // A bin nobody started in has no rate to show: "0.0%" beside the cohorts' 100% read as one.
    const empty = (result.row_headers[i] ?? 0) === 0;
    const cells = Array.from({ length: width }, (_, j) => {
      const cell = row[j];
      if (!cell) return '';
      return empty ? '–' : cellText(cell.percent, cell.count, options);
    });
    table.push([
      first ? binLabel(first.start, period, tz) : `#${i + 1}`,
      String(result.row_headers[i] ?? 0),
      ...cells,
    ]);
  });
  const averages = Array.from({ length: width }, (_, j) => {
    const header = result.column_headers[j];
    return header ? cellText(header.average, header.count, { ...options, color: false }) : '';
  });
  table.push([paint('Average', 'bold', color), String(result.total_users), ...averages]);

  // A bin in which nobody started is a row of the triangle, but not a cohort.
  const cohorts = result.row_headers.filter((size) => size > 0).length;
  const highlights = [
    `Total users: ${result.total_users} in ${cohorts === 1 ? '1 cohort' : `${cohorts} cohorts`}`,
  ];
  const next = result.column_headers[1];
  if (next) highlights.push(`Average ${name.toLowerCase()} 1 retention: ${formatPercent(next.average)}`);
  const last = result.column_headers.at(-1);
  if (last && result.column_headers.length > 2) {
    highlights.push(
      `Average ${name.toLowerCase()} ${result.column_headers.length - 1} retention: ${formatPercent(last.average)}`,
    );
  }
  return block(result.chart_name, table, highlights, color);
}

export function retentionTables(response: RetentionResponse, options: ChartTableOptions): string {
  if (response.length === 0) return '(no data)\n';
  return response.map((result) => resultBlock(result, options)).join('\n');
}
