import { stripVTControlCharacters } from 'node:util';
import { drawTable } from './big-table.js';
import { breakLongWords } from './break-words.js';
import { type CsvOptions, csvCell, DEFAULT_CSV, json, jsonLine, type OutputFormat } from './output.js';
import { escapeControls } from './terminal-text.js';

/**
 * The listings of the discovery and administration commands (`cas events`, `cas users list`, …):
 * one row per item as a table, CSV or JSONL, and `--json` the command's data as it is. Cells are
 * stored text, escaped before they are drawn (a line break as `\n`); an empty cell is shown as `-`
 * in tables only.
 */

export type Cell = string | number | boolean | null | undefined;

export interface Listing {
  columns: readonly string[];
  rows: ReadonlyArray<readonly Cell[]>;
  /** A line under the table (totals, what was left out); tables only. */
  note?: string;
  /** Said instead of an empty table. */
  empty?: string;
  /**
   * Each row's item as data: JSONL prints these, so its values keep their types (aliases a list,
   * traits an object) where the table's cells are display text (`a, b`, `plan=pro`).
   */
  records?: readonly unknown[];
}

export interface ListingOptions {
  color: boolean;
  csv?: CsvOptions;
  /** The terminal's width: a wider table wraps its widest column of text to fit (tables only). */
  width?: number | undefined;
}

/** A column is not narrowed below this width: the table is left wider than the terminal instead. */
const MIN_WRAPPED = 16;

/**
 * Column widths that fit a drawn table into `width` by narrowing its columns of text (those whose
 * cells have spaces to wrap at: an id or a date would be cut short instead), the widest first, each
 * down to MIN_WRAPPED at most; read off the table's top border (its drawn widths, padding included).
 * Undefined when it fits, or has no column of text to narrow. Only the widest was narrowed, so
 * `users list` (aliases and traits) or `properties` at 60 columns were drawn 142 and 246 wide
 * (found by probing): a table that cannot fit now comes as close as it can.
 */
function fitted(drawn: string, width: number, prose: readonly boolean[]): number[] | undefined {
  const top = stripVTControlCharacters(drawn.split('\n')[0] ?? '');
  let excess = top.length - width;
  if (excess <= 0) return undefined;
  const widths = top
    .slice(1, -1)
    .split('┬')
    .map((segment) => segment.length);
  const natural = [...widths];
  while (excess > 0) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++)
      if (prose[i] && widths[i]! > MIN_WRAPPED && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]!--;
    excess--;
  }
  return widths.some((w, i) => w !== natural[i]) ? widths : undefined;
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
    const lines =
      listing.records?.map((record) => jsonLine(record)) ??
      rows.map((row) => jsonLine(Object.fromEntries(columns.map((c, i) => [c, row[i] ?? null]))));
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }
  if (format === 'csv') {
    const csv = options.csv ?? DEFAULT_CSV;
    const line = (cells: readonly string[]) => cells.map((c) => csvCell(c, csv)).join(',');
    return `${[line(columns), ...rows.map((row) => line(row.map(text)))].join('\n')}\n`;
  }
  if (rows.length === 0 && listing.empty !== undefined) return `${escapeControls(listing.empty)}\n`;
  // One line per stored value: a line break drawn raw read as a second row or a second trait.
  const cells = rows.map((row) =>
    row.map((cell) => (text(cell) === '' ? '-' : escapeControls(text(cell), { oneLine: true }))),
  );
  const draw = (widths?: number[]): string =>
    drawTable(
      {
        head: [...columns],
        style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
        ...(widths === undefined ? {} : { colWidths: widths, wordWrap: true }),
      },
      // A word wider than its narrowed column is broken, not cut short with "…"; 2 is the padding.
      widths === undefined
        ? cells
        : cells.map((row) => row.map((c, i) => breakLongWords(c, (widths[i] ?? 0) - 2))),
    );
  const natural = draw();
  const prose = columns.map((_, i) => cells.some((row) => row[i]?.includes(' ')));
  const fit = options.width === undefined ? undefined : fitted(natural, options.width, prose);
  const note = listing.note !== undefined ? `${escapeControls(listing.note)}\n` : '';
  return `${fit === undefined ? natural : draw(fit)}\n${note}`;
}
