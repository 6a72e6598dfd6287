import type Table from 'cli-table3';
import { formatInZone, type Period } from '../shared/time-bins.js';
import { paint } from './bars.js';
import { drawTable } from './big-table.js';
import { type CsvOptions, csvCell, DEFAULT_CSV, jsonLine } from './output.js';

/**
 * Shared pieces of the chart tables: bin labels in the chart's zone, numbers, durations, and one
 * table style. Labels are for people only; CSV and JSON keep the service's ISO bounds untouched.
 */

export interface ChartTableOptions {
  period: Period;
  tz: string;
  color: boolean;
  /** `-v`: counts next to percentages in the retention triangle. */
  verbose: boolean;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY_MS = 86_400_000;

/** ISO 8601 week-numbering year and week of a civil date (weeks start Monday, like the bins). */
export function isoWeek(y: number, m: number, d: number): { year: number; week: number } {
  const date = new Date(Date.UTC(y, m - 1, d));
  date.setUTCFullYear(y);
  const weekday = (date.getUTCDay() + 6) % 7;
  // The Thursday of this week decides the year; its ordinal day decides the week.
  const thursday = new Date(date.getTime() + (3 - weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const jan1 = new Date(Date.UTC(year, 0, 1));
  jan1.setUTCFullYear(year);
  return { year, week: 1 + Math.floor((thursday.getTime() - jan1.getTime()) / (7 * DAY_MS)) };
}

/**
 * A bin start without an offset (`2025-01-06`, `2025-01-06T00:00:00`, as the hosted service may give
 * them) is already the chart's wall time: Date.parse read the first as UTC and the second in the
 * machine's zone, and labelled bins a day early (found by probing).
 */
const WALL_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/;

/** `2025-03-09` (day), `2025-W10 Mar 3` (week), `2025-03` (month), read in the chart's zone. */
export function binLabel(start: string, period: Period, tz: string): string {
  let local = start;
  if (!WALL_TIME.test(start)) {
    const ms = Date.parse(start);
    if (Number.isNaN(ms)) return start;
    local = formatInZone(ms, tz);
  }
  if (period === 'day') return local.slice(0, 10);
  if (period === 'month') return local.slice(0, 7);
  const [y, m, d] = local.slice(0, 10).split('-').map(Number) as [number, number, number];
  const { year, week } = isoWeek(y, m, d);
  return `${year}-W${String(week).padStart(2, '0')} ${MONTHS[m - 1]} ${d}`;
}

export function periodName(period: Period): string {
  return period === 'day' ? 'Day' : period === 'week' ? 'Week' : 'Month';
}

/**
 * Whole numbers as they are; others to two decimals from 1 up (2.5, 2.33), and below 1 to three
 * significant digits (0.667, 0.0132, 0.001), trailing zeros dropped. Two decimals throughout showed a
 * cost of a tenth of a cent as 0, and 0.0132 and 0.005 alike (found by probing).
 */
export function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) >= 1) return String(Math.round(n * 100) / 100);
  return String(Number(n.toPrecision(3)));
}

export function formatPercent(n: number): string {
  return `${n.toFixed(1)}%`;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Seconds in human units: `45s`, `1m 05s`, `2h 03m`, `3d 04h`; `<1s` for a blip, `0s` for none. */
export function humanDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '0s';
  if (seconds < 0.5) return '<1s';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad2(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad2(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86_400)}d ${pad2(Math.floor(s / 3600) % 24)}h`;
}

/** `1 event`, `2 events`. */
export function count(n: number, noun: string): string {
  return `${formatNumber(n)} ${n === 1 ? noun : `${noun}s`}`;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * A cli-table3 table; `aligns` has one letter per column, `l` or `r` (numbers right-aligned, labels and
 * bars left). Without colour, cli-table3's default red headings and grey borders are switched off.
 */
export function chartTable(head: string[], aligns: string, color: boolean): ChartTable {
  return new ChartTable({
    head,
    colAligns: head.map((_, i) => (aligns[i] === 'r' ? 'right' : 'left')),
    // No rule between rows: a 30-bin chart stays 30 lines instead of 60.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    style: { head: color ? ['cyan'] : [], border: color ? ['grey'] : [] },
  });
}

/** Rows pushed, then drawn whole (big-table.ts draws a long table in pieces, as cli-table3 is quadratic). */
export class ChartTable {
  private readonly rows: Table.HorizontalTableRow[] = [];

  constructor(private readonly options: Table.TableConstructorOptions) {}

  push(...rows: Table.HorizontalTableRow[]): void {
    this.rows.push(...rows);
  }

  toString(): string {
    return drawTable(this.options, this.rows);
  }
}

/** A titled table followed by its highlight lines. */
export function block(title: string, table: ChartTable, highlights: string[], color: boolean): string {
  const lines = [paint(title, 'bold', color), table.toString(), ...highlights.map((h) => `  ${h}`)];
  return `${lines.join('\n')}\n`;
}

/*
 * Flat rows for `--format csv` and `jsonl`: one per point or cell, the same columns in both, numbers
 * kept as numbers in JSONL and written plainly in CSV, bounds as the service sent them (ISO 8601).
 */

export type ChartRow = Record<string, string | number>;

export function rowsToCsv(
  columns: readonly string[],
  rows: readonly ChartRow[],
  options: CsvOptions = DEFAULT_CSV,
): string {
  const lines = [columns.map((c) => csvCell(c, options)).join(',')];
  for (const row of rows) {
    // Numbers are ours, never a formula; text (event names, group values, labels) is stored text.
    lines.push(columns.map((c) => csvCell(String(row[c] ?? ''), options)).join(','));
  }
  return `${lines.join('\n')}\n`;
}

export function rowsToJsonl(columns: readonly string[], rows: readonly ChartRow[]): string {
  // Re-keyed in column order so every line lists its fields the same way as the CSV header.
  const lines = rows.map((row) => jsonLine(Object.fromEntries(columns.map((c) => [c, row[c] ?? '']))));
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
