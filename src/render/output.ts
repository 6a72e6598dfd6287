import Table from 'cli-table3';
import { escapeControls, escapeDeep, guardFormula, terminalSafeJson } from './terminal-text.js';

export type OutputFormat = 'table' | 'json' | 'jsonl' | 'csv';

/** cli.md: JSON unless a person is looking (stdout is a terminal) or a format is asked for. */
export function chooseFormat(
  options: { format?: string | undefined; json?: boolean | undefined },
  isTty: boolean,
): OutputFormat {
  if (options.json) return 'json';
  if (
    options.format === 'table' ||
    options.format === 'json' ||
    options.format === 'jsonl' ||
    options.format === 'csv'
  ) {
    return options.format;
  }
  return isTty ? 'table' : 'json';
}

export function json(value: unknown): string {
  return `${terminalSafeJson(JSON.stringify(value, null, 2))}\n`;
}

/** One JSON value on one line (JSONL), safe to print like `json`. */
export function jsonLine(value: unknown): string {
  return terminalSafeJson(JSON.stringify(value));
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A record as a two-column table; nested objects (traits) expand one row per key. Keys and values
 * are stored text: control characters are shown escaped, a line break as `\n`.
 */
export function keyValueTable(stored: Record<string, unknown>, options: { color: boolean }): string {
  const record = escapeDeep(stored, { oneLine: true });
  const table = new Table({
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
  });
  for (const [key, value] of Object.entries(record)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value);
      if (entries.length === 0) table.push({ [key]: '(none)' });
      for (const [inner, innerValue] of entries) table.push({ [`${key}.${inner}`]: cell(innerValue) });
    } else {
      table.push({ [key]: Array.isArray(value) ? value.map(cell).join(', ') : cell(value) });
    }
  }
  return `${table.toString()}\n`;
}

export interface CsvOptions {
  /** Neutralise cells a spreadsheet would run as a formula (on unless `--no-csv-guard`). */
  guard: boolean;
  /** Stdout is a terminal: control characters are shown escaped, as in tables. */
  terminal: boolean;
}

export const DEFAULT_CSV: CsvOptions = { guard: true, terminal: false };

export function renderRecord(
  record: Record<string, unknown>,
  format: OutputFormat,
  options: { color: boolean; csv?: CsvOptions },
): string {
  if (format === 'json') return json(record);
  if (format === 'jsonl') return `${jsonLine(record)}\n`;
  if (format === 'csv') {
    const csv = options.csv ?? DEFAULT_CSV;
    const keys = Object.keys(record);
    const line = (cells: string[]) => cells.map((c) => csvCell(c, csv)).join(',');
    return `${line(keys)}\n${line(keys.map((k) => cell(record[k])))}\n`;
  }
  return keyValueTable(record, options);
}

/** One CSV cell: formula-guarded and escaped as `options` ask, then quoted when it must be. */
export function csvCell(value: string, options: CsvOptions): string {
  const guarded = options.guard ? guardFormula(value) : value;
  return csvField(options.terminal ? escapeControls(guarded) : guarded);
}

export function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
