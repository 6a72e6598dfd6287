import { zoneOffsetMs } from '../shared/time-bins.js';
/**
 * Timestamps as cli.md accepts them: ISO 8601 with Z or an offset; naive ISO read in `--tz`;
 * epoch seconds or milliseconds told apart by magnitude. Everything leaves as an instant in ms,
 * written back as ISO with Z (the one form the wire and the event-id hash see).
 */

export type TimeResult = { ok: true; ms: number; iso?: string } | { ok: false; reason: string };

/** Already in the one output form (ms precision, Z): reused as is, saving a Date per record. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Epoch values below this are seconds (1e11 s is the year 5138; 1e11 ms is March 1973). */
const SECONDS_BELOW = 1e11;
/** Above this an epoch in ms is past the year 5138: more likely micro- or nanoseconds, so refused. */
const MS_BELOW = 1e14;

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export function fromEpoch(n: number): TimeResult {
  if (!Number.isFinite(n) || n < 0) return { ok: false, reason: `epoch time ${n} is out of range` };
  if (n < SECONDS_BELOW) return { ok: true, ms: Math.round(n * 1000) };
  if (n < MS_BELOW) return { ok: true, ms: Math.round(n) };
  return { ok: false, reason: `epoch time ${n} is too large for seconds or milliseconds` };
}

/** Offsets change only on quarter hours, and formatToParts costs microseconds: cache per quarter hour. */
const QUARTER_HOUR = 15 * 60_000;
const offsets = new Map<string, number>();

/** Offset of `tz` from UTC at instant `ms`, in ms (positive east of Greenwich). */
export function zoneOffset(tz: string, ms: number): number {
  const key = `${tz} ${Math.floor(ms / QUARTER_HOUR)}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    const at = Math.floor(ms / QUARTER_HOUR) * QUARTER_HOUR;
    offset = zoneOffsetMs(at, tz);
    if (offsets.size > 50_000) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

/**
 * A wall-clock time in `tz` → instant. Tries the offset at the naive guess, then at the corrected
 * time, which settles both DST edges: a skipped hour moves forward, a repeated hour takes the first.
 */
export function wallTimeToInstant(wallMs: number, tz: string): number {
  if (tz === 'UTC') return wallMs;
  const first = zoneOffset(tz, wallMs);
  const guess = wallMs - first;
  const second = zoneOffset(tz, guess);
  return second === first ? guess : wallMs - Math.min(first, second);
}

function fromIso(m: RegExpExecArray, text: string, tz: string): TimeResult {
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  const ms = Number(`0.${frac || '0'}`) * 1000;
  const wall = Date.UTC(...fields) + Math.round(ms);
  const check = new Date(Date.UTC(...fields));
  if (
    check.getUTCMonth() !== fields[1] ||
    check.getUTCDate() !== fields[2] ||
    fields[3] > 23 ||
    fields[4] > 59 ||
    fields[5] > 59
  ) {
    return { ok: false, reason: `timestamp "${text}" is not a valid date and time` };
  }
  if (zone === undefined) return { ok: true, ms: wallTimeToInstant(wall, tz) };
  if (zone === 'Z' || zone === 'z') return { ok: true, ms: wall };
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')) * 60_000;
  return { ok: true, ms: wall - sign * offset };
}

/** Any accepted timestamp value → instant. `undefined`/empty means "no timestamp", not an error. */
export function parseTimestamp(value: unknown, tz: string): TimeResult | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number') return fromEpoch(value);
  if (typeof value !== 'string')
    return { ok: false, reason: `timestamp must be a string or number, got ${typeof value}` };
  const text = value.trim();
  if (NUMERIC.test(text)) return fromEpoch(Number(text));
  const m = ISO.exec(text);
  if (!m) return { ok: false, reason: `timestamp "${text}" is not ISO 8601 or epoch seconds/milliseconds` };
  const result = fromIso(m, text, tz);
  if (result.ok && CANONICAL.test(text)) result.iso = text;
  return result;
}

export const toIso = (ms: number): string => new Date(ms).toISOString();
