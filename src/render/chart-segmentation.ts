import type { PropertyFilter } from '../shared/chart-filters.js';
import type { SegmentationResponse, SegPoint } from '../shared/chart-responses.js';
import { bar, paint, sparkline } from './bars.js';
import {
  binLabel,
  block,
  type ChartRow,
  type ChartTableOptions,
  chartTable,
  count,
  formatNumber,
  mean,
  periodName,
} from './chart-format.js';
import { filterText } from './cohorts.js';

/** Segmentation (decisions §6): one table per series, or per group of a grouped series. */

/**
 * `series` is the series' index in `eventFilters`: two series of one event (filtered apart by `with`)
 * gave rows no script could tell apart (found by probing), which the table tells by its titles.
 */
export const SEGMENTATION_COLUMNS = [
  'series',
  'event_name',
  'group',
  'start',
  'end',
  'total',
  'unique',
  'average',
];

/** With a series `measure` (our extension) the rows also carry it and its value. */
export function segmentationColumns(response: SegmentationResponse): string[] {
  return response.some((r) => r.measure !== undefined)
    ? [...SEGMENTATION_COLUMNS, 'measure', 'value']
    : SEGMENTATION_COLUMNS;
}

export function segmentationRows(response: SegmentationResponse): ChartRow[] {
  const rows: ChartRow[] = [];
  const measured = response.some((r) => r.measure !== undefined);
  const push = (series: number, event: string, group: string, p: SegPoint, measure: string | undefined) =>
    rows.push({
      series,
      event_name: event,
      group,
      start: p.start,
      end: p.end,
      total: p.total,
      unique: p.unique,
      average: p.average,
      ...(measured ? { measure: measure ?? '', value: p.value ?? '' } : {}),
    });
  response.forEach((result, series) => {
    for (const point of result.points ?? []) push(series, result.event_name, '', point, result.measure);
    for (const group of result.groups ?? []) {
      for (const point of group.points) push(series, result.event_name, group.group, point, result.measure);
    }
  });
  return rows;
}

interface Highlights {
  average_events: number;
  average_unique_users: number;
}

function seriesBlock(
  title: string,
  points: readonly SegPoint[],
  highlights: Highlights | undefined,
  options: ChartTableOptions,
  measure?: string,
): string {
  const { period, tz, color } = options;
  const head = [periodName(period), 'Total', 'Unique', 'Average', ...(measure ? [measure] : []), ''];
  const table = chartTable(head, measure ? 'lrrrrl' : 'lrrrl', color);
  const totals = points.map((p) => p.total);
  // With a measure the bars show it; a bin without numbers (null) has none.
  const barred = measure ? points.map((p) => p.value ?? 0) : totals;
  const max = Math.max(0, ...barred);
  points.forEach((p, i) => {
    table.push([
      binLabel(p.start, period, tz),
      formatNumber(p.total),
      formatNumber(p.unique),
      formatNumber(p.average),
      ...(measure ? [p.value === null || p.value === undefined ? '-' : formatNumber(p.value)] : []),
      paint(bar(barred[i] ?? 0, max), 'cyan', color),
    ]);
  });
  // Grouped series carry no highlights from the service; the same means are computed here.
  const averageEvents = highlights?.average_events ?? mean(totals);
  const averageUsers = highlights?.average_unique_users ?? mean(points.map((p) => p.unique));
  const sum = totals.reduce((a, b) => a + b, 0);
  return block(
    title,
    table,
    [
      `Average per ${period}: ${count(averageEvents, 'event')}, ${count(averageUsers, 'unique user')}`,
      `Total: ${count(sum, 'event')}   trend ${sparkline(totals)}`,
    ],
    color,
  );
}

/** What the controls say of series i: its group-by property and its `with` filters. */
export interface SeriesAsked {
  groupName?: string | undefined;
  where?: readonly PropertyFilter[] | undefined;
}

/**
 * Titles like `Turn where model = gpt-4o · plan = pro`: two series of one event told apart by their
 * filters (each table was titled by the event alone).
 */
export function segmentationTables(
  response: SegmentationResponse,
  asked: readonly SeriesAsked[],
  options: ChartTableOptions,
): string {
  const blocks: string[] = [];
  response.forEach((result, i) => {
    const { groupName, where } = asked[i] ?? {};
    const series =
      where && where.length > 0
        ? `${result.event_name} where ${where.map(filterText).join(' and ')}`
        : result.event_name;
    if (result.points) {
      blocks.push(seriesBlock(series, result.points, result.highlights, options, result.measure));
    }
    for (const group of result.groups ?? []) {
      const title = `${series} · ${groupName !== undefined ? `${groupName} = ` : ''}${group.group}`;
      blocks.push(seriesBlock(title, group.points, undefined, options, result.measure));
    }
    if (!result.points && (result.groups ?? []).length === 0) {
      blocks.push(`${paint(series, 'bold', options.color)}\n  (no data)\n`);
    }
  });
  return blocks.join('\n');
}
