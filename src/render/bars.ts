/**
 * Terminal drawing primitives for the chart tables: unicode block bars (eighth-cell resolution, so
 * small differences still show in 20 columns) and ANSI colour that is a no-op when colour is off, so
 * piped or NO_COLOR output never carries escape codes.
 */

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'] as const;
export const BAR_WIDTH = 20;

/** A bar for `value` on a scale where `max` fills `width` cells; empty for zero or no scale. */
export function bar(value: number, max: number, width: number = BAR_WIDTH): string {
  if (!(max > 0) || !(value > 0) || !Number.isFinite(value)) return '';
  // A non-zero value always gets at least an eighth: "some" must look different from "none".
  const eighths = Math.max(1, Math.round(Math.min(value / max, 1) * width * 8));
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  grey: [90, 39],
} as const;
export type Style = keyof typeof CODES;

export function paint(text: string, style: Style, color: boolean): string {
  if (!color || text === '') return text;
  const [open, close] = CODES[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/** A sparkline of a series (spark's eight levels), for the one-line summary under a table. */
export function sparkline(values: readonly number[]): string {
  const levels = '▁▂▃▄▅▆▇█';
  const max = Math.max(0, ...values.filter(Number.isFinite));
  if (max === 0) return values.map(() => levels[0]).join('');
  return values
    .map((v) => levels[Math.min(7, Math.max(0, Math.round((Number.isFinite(v) ? v / max : 0) * 7)))])
    .join('');
}
