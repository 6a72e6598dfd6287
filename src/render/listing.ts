import Table from 'cli-table3';
import { type CsvOptions, csvCell, DEFAULT_CSV, json, jsonLine, type OutputFormat } from './output.js';
import { escapeControls } from './terminal-text.js';

/**
 * The listings of the discovery and administration commands (`cas events`, `cas users list`, …):
 * one row per item as a table, CSV or JSONL, and `--json` the command's data as it is. Cells are
 * stored text, escaped before they are drawn; an empty cell is shown as `-` in tables only.
 */

export type Cell = string | number | boolean | null | undefined;

export interface Listing {
  columns: readonly string[];
  rows: ReadonlyArray<readonly Cell[]>;
  /** A line under the table (totals, what was left out); tables only. */
  note?: string;
  /** Said instead of an empty table. */
  empty?: string;
}

export interface ListingOptions {
  color: boolean;
  csv?: CsvOptions;
}

const text = (cell: Cell): string => (cell === null || cell === undefined ? '' : String(cell));

export function renderListing(
  data: unknown,
  listing: Listing,
  format: OutputFormat,
  options: ListingOptions,
): string {
  if (format === 'json') return json(data);
  const { columns, rows } = listing;
  if (format === 'jsonl') {
    const lines = rows.map((row) => jsonLine(Object.fromEntries(columns.map((c, i) => [c, row[i] ?? null]))));
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }
  if (format === 'csv') {
    const csv = options.csv ?? DEFAULT_CSV;
    const line = (cells: readonly string[]) => cells.map((c) => csvCell(c, csv)).join(',');
    return `${[line(columns), ...rows.map((row) => line(row.map(text)))].join('\n')}\n`;
  }
  if (rows.length === 0 && listing.empty !== undefined) return `${escapeControls(listing.empty)}\n`;
  const table = new Table({
    head: [...columns],
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
  });
  for (const row of rows) {
    table.push(row.map((cell) => (text(cell) === '' ? '-' : escapeControls(text(cell)))));
  }
  const note = listing.note !== undefined ? `${escapeControls(listing.note)}\n` : '';
  return `${table.toString()}\n${note}`;
}
