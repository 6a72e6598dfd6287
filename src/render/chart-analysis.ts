import type { AnalysisPoint, AnalysisResponse } from '../shared/analysis-responses.js';
import {
  binLabel,
  block,
  type ChartRow,
  type ChartTableOptions,
  chartTable,
  formatNumber,
} from './chart-format.js';
import { escapeControls } from './terminal-text.js';

/**
 * Conversation analysis: one row per bin with the numbers of the chosen `analyse` (which fields a
 * point has depends on it), then the highlights.
 */

const BOUNDS = new Set(['start', 'end', 'drilldown_id']);

/** The numeric fields the points carry, in first-seen order: the same columns for every row. */
function fieldsOf(response: AnalysisResponse): string[] {
  const fields: string[] = [];
  const points = [...(response.points ?? []), ...(response.groups ?? []).flatMap((g) => g.points)];
  for (const p of points) {
    for (const [k, v] of Object.entries(p))
      if (!BOUNDS.has(k) && typeof v === 'number' && !fields.includes(k)) fields.push(k);
  }
  return fields;
}

export function analysisColumns(response: AnalysisResponse): string[] {
  return ['chart_name', 'group', 'start', 'end', ...fieldsOf(response)];
}

export function analysisRows(response: AnalysisResponse): ChartRow[] {
  const fields = fieldsOf(response);
  const rows: ChartRow[] = [];
  const push = (group: string, p: AnalysisPoint) => {
    const row: ChartRow = { chart_name: response.chart_name, group, start: p.start, end: p.end };
    const values = p as Record<string, unknown>;
    for (const f of fields) row[f] = typeof values[f] === 'number' ? (values[f] as number) : '';
    rows.push(row);
  };
  for (const p of response.points ?? []) push('', p);
  for (const g of response.groups ?? []) for (const p of g.points) push(g.group, p);
  return rows;
}

function pointsBlock(points: readonly AnalysisPoint[], fields: string[], options: ChartTableOptions) {
  const { period, tz, color } = options;
  const table = chartTable(['Period', ...fields], `l${'r'.repeat(fields.length)}`, color);
  for (const p of points) {
    const values = p as Record<string, unknown>;
    table.push([
      binLabel(p.start, period, tz),
      ...fields.map((f) => (typeof values[f] === 'number' ? formatNumber(values[f] as number) : '')),
    ]);
  }
  return table;
}

export function analysisTables(
  response: AnalysisResponse,
  groupBy: string | undefined,
  options: ChartTableOptions,
): string {
  const fields = fieldsOf(response);
  const highlights = [
    Object.entries(response.highlights)
      .map(
        ([k, v]) =>
          `${escapeControls(k, { oneLine: true })} ${typeof v === 'number' ? formatNumber(v) : escapeControls(v, { oneLine: true })}`,
      )
      .join(', '),
  ];
  const blocks: string[] = [];
  if (response.points)
    blocks.push(
      block(response.chart_name, pointsBlock(response.points, fields, options), highlights, options.color),
    );
  for (const g of response.groups ?? []) {
    const title = `${response.chart_name} · ${groupBy !== undefined ? `${groupBy} = ` : ''}${g.group}`;
    blocks.push(block(title, pointsBlock(g.points, fields, options), [], options.color));
  }
  if (response.groups) blocks.push(`  ${highlights[0]}\n`);
  return blocks.length > 0 ? blocks.join('\n') : `${response.chart_name}\n  (no data)\n`;
}
