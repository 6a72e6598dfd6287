import Table from 'cli-table3';
import utils from 'cli-table3/src/utils.js';

/**
 * Rows per cli-table3 table. Its layout checks every cell against every cell above it, so time grows
 * with the square of the rows: a users chart of 34k slices took 54 s as a table, against 2.6 s as
 * JSON, and `users list --limit 20000` 36 s (found by probing). Longer tables are drawn in pieces of
 * this many rows at the widths of the whole, and joined where one piece's bottom border meets the
 * next one's top: the same text, byte for byte (big-table.test.ts).
 */
const PIECE_ROWS = 200;

type Row = Table.HorizontalTableRow;

/** The width cli-table3 gives a column: its widest line, padding included. */
function naturalWidths(options: Table.TableConstructorOptions, rows: readonly Row[]): number[] {
  const padding = (options.style?.['padding-left'] ?? 1) + (options.style?.['padding-right'] ?? 1);
  const widths: number[] = [];
  const measure = (cells: readonly unknown[]) =>
    cells.forEach((cell, i) => {
      const text = cell === null || cell === undefined ? '' : String(cell);
      const widest = Math.max(...text.split('\n').map((line) => utils.strlen(line)));
      widths[i] = Math.max(widths[i] ?? 0, widest + padding);
    });
  measure(options.head ?? []);
  for (const row of rows) measure(row);
  return widths;
}

/** The border line between two rows, made from a piece's bottom border. */
function ruleFrom(bottom: string, chars: Partial<Record<Table.CharName, string>>): string {
  const swap: Array<[Table.CharName, Table.CharName, string, string]> = [
    ['bottom-left', 'left-mid', '└', '├'],
    ['bottom-mid', 'mid-mid', '┴', '┼'],
    ['bottom-right', 'right-mid', '┘', '┤'],
    ['bottom', 'mid', '─', '─'],
  ];
  let line = bottom;
  for (const [from, to, fromDefault, toDefault] of swap) {
    line = line.replaceAll(chars[from] ?? fromDefault, chars[to] ?? toDefault);
  }
  return line;
}

/** A cli-table3 table of `rows`, as `new Table(options)` with every row pushed would draw it. */
export function drawTable(options: Table.TableConstructorOptions, rows: readonly Row[]): string {
  if (rows.length <= PIECE_ROWS) {
    const table = new Table(options);
    table.push(...rows);
    return table.toString();
  }
  const colWidths = options.colWidths ?? naturalWidths(options, rows);
  const chars = options.chars ?? {};
  // A table with no rule between rows (chars.mid '') joins its pieces with nothing in between.
  const ruled = chars.mid !== '';
  const lines: string[] = [];
  for (let start = 0; start < rows.length; start += PIECE_ROWS) {
    const table = new Table({ ...options, colWidths, ...(start === 0 ? {} : { head: [] }) });
    table.push(...rows.slice(start, start + PIECE_ROWS));
    const piece = table.toString().split('\n');
    if (start > 0) {
      const bottom = lines.pop() ?? '';
      if (ruled) lines.push(ruleFrom(bottom, chars));
      piece.shift();
    }
    lines.push(...piece);
  }
  return lines.join('\n');
}
