import type { ChartControlsByKind, ChartKind } from '../shared/chart-controls.js';
import type { ChartResponseByKind } from '../shared/chart-responses.js';
import { analysisColumns, analysisRows, analysisTables } from './chart-analysis.js';
import { type ChartRow, type ChartTableOptions, rowsToCsv, rowsToJsonl } from './chart-format.js';
import { FUNNEL_COLUMNS, funnelRows, funnelTables } from './chart-funnel.js';
import { RETENTION_COLUMNS, retentionRows, retentionTables } from './chart-retention.js';
import { segmentationColumns, segmentationRows, segmentationTables } from './chart-segmentation.js';
import { SESSION_COLUMNS, sessionRows, sessionTables } from './chart-sessions.js';
import { SLICE_COLUMNS, sliceRows, sliceTables } from './chart-slices.js';
import { USER_COLUMNS, userRows, userTables } from './chart-users.js';
import { type CsvOptions, DEFAULT_CSV, json, type OutputFormat } from './output.js';
import { escapeDeep } from './terminal-text.js';

/**
 * A fetched chart in the format asked for. `json` is the service's body as received (not the parsed
 * copy, which drops fields this client does not know); the other formats render the parsed body.
 */

export type ChartData = { [K in ChartKind]: { kind: K; response: ChartResponseByKind[K] } }[ChartKind];

export type ChartView = ChartData & {
  /** The body exactly as the service sent it. */
  raw: unknown;
  /** The validated chartControls the chart was asked with: its zone, period and group-by names. */
  parsed: ChartControlsByKind[ChartKind];
};

export interface ChartRenderOptions {
  color: boolean;
  verbose: boolean;
  /** For `--format csv`: the formula guard and whether stdout is a terminal. */
  csv?: CsvOptions;
}

/** One row per point or cell: the rows of `--format csv|jsonl` (and the report's tables). */
export function flatChart(data: ChartData): { columns: readonly string[]; rows: ChartRow[] } {
  switch (data.kind) {
    case 'segmentation':
      return { columns: segmentationColumns(data.response), rows: segmentationRows(data.response) };
    case 'retention':
      return { columns: RETENTION_COLUMNS, rows: retentionRows(data.response) };
    case 'session':
      return { columns: SESSION_COLUMNS, rows: sessionRows(data.response) };
    case 'user-composition':
      return { columns: USER_COLUMNS, rows: userRows(data.response) };
    case 'funnel':
      return { columns: FUNNEL_COLUMNS, rows: funnelRows(data.response) };
    case 'intent-distribution':
    case 'sentiment-analysis':
      return { columns: SLICE_COLUMNS, rows: sliceRows(data.response) };
    case 'conversation-analysis':
    case 'intent-analysis':
      return { columns: analysisColumns(data.response), rows: analysisRows(data.response) };
  }
}

function tables(view: ChartView, options: ChartTableOptions): string {
  const { parsed } = view;
  const traitGroup = 'groupBy' in parsed ? parsed.groupBy?.trait_name : undefined;
  switch (view.kind) {
    case 'segmentation': {
      const series = 'eventFilters' in parsed ? (parsed.eventFilters ?? []) : [];
      const asked = series.map((f) => ({ groupName: f.groupBy?.property_name, where: f.with }));
      return segmentationTables(view.response, asked, options);
    }
    case 'retention':
      return retentionTables(view.response, options);
    case 'session':
      return sessionTables(view.response, traitGroup, options);
    case 'user-composition': {
      const trait = 'selectedTrait' in parsed ? parsed.selectedTrait.trait_name : undefined;
      return userTables(view.response, { trait, groupBy: traitGroup }, options.color);
    }
    case 'funnel':
      return funnelTables(view.response, traitGroup, options.color);
    case 'intent-distribution':
      return sliceTables(view.response, 'Intent', traitGroup, options.color);
    case 'sentiment-analysis':
      return sliceTables(view.response, 'Sentiment', traitGroup, options.color);
    case 'conversation-analysis':
    case 'intent-analysis':
      return analysisTables(view.response, traitGroup, options);
  }
}

export function renderChart(view: ChartView, format: OutputFormat, options: ChartRenderOptions): string {
  if (format === 'json') return json(view.raw);
  if (format === 'csv' || format === 'jsonl') {
    const { columns, rows } = flatChart(view);
    return format === 'csv'
      ? rowsToCsv(columns, rows, options.csv ?? DEFAULT_CSV)
      : rowsToJsonl(columns, rows);
  }
  // Event names, group values, trait names and labels are stored text: escaped before any of our
  // own colour codes are added, on one line each (a group value's line break would split its table
  // row or title; shown as `\n`, it stays apart from the same words joined by a space). `raw` is not
  // drawn from, so it is not walked.
  const safe = escapeDeep<ChartView>({ ...view, raw: null }, { oneLine: true });
  const { period, tz } = safe.parsed.range;
  return tables(safe, { period, tz, color: options.color, verbose: options.verbose });
}
