import { z } from 'zod';

/**
 * Calendar bins of decisions §6, computed with Intl only: the service must agree with DuckDB's
 * `date_trunc(unit, ts AT TIME ZONE tz)` without shipping a time-zone library.
 */
export const PERIODS = ['day', 'week', 'month'] as const;
export type Period = (typeof PERIODS)[number];

/** The fields of a ChartRange that bins depend on, kept structural so this file needs no chart schema. */
export interface BinRange {
  start: string;
  end: string;
  period: Period;
  tz: string;
}

export interface Bin {
  start: Date;
  end: Date;
  /** `start` as ISO 8601 local time with the zone's offset, e.g. `2025-03-09T00:00:00-05:00`. */
  startIso: string;
  endIso: string;
}

const DAY_MS = 86_400_000;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
// zod's checker validates the calendar too (no Feb 30), which Date.parse silently rolls over.
const isoInstant = z.iso.datetime({ offset: true });

interface Civil {
  y: number;
  m: number; // 1-12
  d: number;
}
interface Wall extends Civil {
  h: number;
  mi: number;
  s: number;
}

// h23 because some ICU builds render midnight as 24 with hour12:false.
const WALL_OPTIONS: Intl.DateTimeFormatOptions = {
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
};

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { ...WALL_OPTIONS, timeZone: tz });
    formatters.set(tz, f);
  }
  return f;
}

/** en-US with the options above: `3/9/2025, 02:30:00`; an era or any other shape goes through formatToParts. */
const EN_US_WALL = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

/**
 * Instants before 0002-01-01: their local year may be 0 or before, which en-US writes as year 1
 * with no era unless asked for one. Read as year 1, a range in year 1 west of Greenwich had its first
 * bin in "year 1" a year late, past the range's end, and charts answered no bins at all.
 */
const ERA_BEFORE_MS = (() => {
  const d = new Date(0);
  d.setUTCFullYear(2, 0, 1);
  return d.getTime();
})();

const eraFormatters = new Map<string, Intl.DateTimeFormat>();
function eraFormatterFor(tz: string): Intl.DateTimeFormat {
  let f = eraFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { ...WALL_OPTIONS, timeZone: tz, era: 'short' });
    eraFormatters.set(tz, f);
  }
  return f;
}

function wallClock(ms: number, tz: string): Wall {
  if (ms < ERA_BEFORE_MS) return partsWall(eraFormatterFor(tz), ms);
  const f = formatterFor(tz);
  // format() and a regex take a quarter of formatToParts' time; bins make ~10 of these calls each.
  const m = EN_US_WALL.exec(f.format(ms));
  if (m)
    return {
      y: Number(m[3]),
      m: Number(m[1]),
      d: Number(m[2]),
      h: Number(m[4]),
      mi: Number(m[5]),
      s: Number(m[6]),
    };
  return partsWall(f, ms);
}

function partsWall(f: Intl.DateTimeFormat, ms: number): Wall {
  const w: Wall = { y: 0, m: 0, d: 0, h: 0, mi: 0, s: 0 };
  let beforeChrist = false;
  for (const part of f.formatToParts(ms)) {
    const n = Number(part.value);
    if (part.type === 'era') beforeChrist = /^B/i.test(part.value);
    else if (part.type === 'year') w.y = n;
    else if (part.type === 'month') w.m = n;
    else if (part.type === 'day') w.d = n;
    else if (part.type === 'hour') w.h = n;
    else if (part.type === 'minute') w.mi = n;
    else if (part.type === 'second') w.s = n;
  }
  // 1 BC is year 0 in ISO 8601's proleptic calendar, 2 BC year -1.
  if (beforeChrist) w.y = 1 - w.y;
  return w;
}

/** Days since 1970-01-01 of a civil date; setUTCFullYear avoids Date.UTC's 19xx mapping of years < 100. */
function civilToDays(c: Civil): number {
  const date = new Date(0);
  date.setUTCFullYear(c.y, c.m - 1, c.d);
  return Math.floor(date.getTime() / DAY_MS);
}

function daysToCivil(days: number): Civil {
  const date = new Date(days * DAY_MS);
  return { y: date.getUTCFullYear(), m: date.getUTCMonth() + 1, d: date.getUTCDate() };
}

function wallToUtcMs(w: Wall): number {
  return civilToDays(w) * DAY_MS + ((w.h * 60 + w.mi) * 60 + w.s) * 1000;
}

/** Offset of `tz` at an instant, in ms (local − UTC). Whole seconds, as Intl reports no finer. */
export function zoneOffsetMs(ms: number, tz: string): number {
  return wallToUtcMs(wallClock(ms, tz)) - Math.floor(ms / 1000) * 1000;
}

function sameCivil(a: Civil, b: Civil): boolean {
  return a.y === b.y && a.m === b.m && a.d === b.d;
}

/** The first instant of a local calendar day: usually 00:00, later when a DST gap swallows midnight. */
function startOfLocalDay(c: Civil, tz: string): number {
  const guess = civilToDays(c) * DAY_MS;
  // Offsets a day either side cover both sides of any transition near this date.
  const candidates = [guess - DAY_MS, guess, guess + DAY_MS].map((t) => guess - zoneOffsetMs(t, tz));
  let best: number | undefined;
  for (const t of candidates) {
    const w = wallClock(t, tz);
    if (sameCivil(w, c) && w.h === 0 && w.mi === 0 && w.s === 0 && (best === undefined || t < best)) best = t;
  }
  if (best !== undefined) return best;
  // Midnight does not exist (e.g. America/Sao_Paulo before 2019): search for the first second of the day.
  const target = civilToDays(c);
  let lo = Math.floor((Math.min(...candidates) - 6 * 3_600_000) / 1000);
  let hi = Math.ceil((Math.max(...candidates) + 6 * 3_600_000) / 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (civilToDays(wallClock(mid * 1000, tz)) >= target) hi = mid;
    else lo = mid;
  }
  return hi * 1000;
}

function binStartCivil(c: Civil, period: Period): Civil {
  if (period === 'day') return c;
  if (period === 'month') return { y: c.y, m: c.m, d: 1 };
  const days = civilToDays(c);
  // 1970-01-01 was a Thursday; shift so Monday is 0 (ISO week).
  const mondayBased = (((days + 3) % 7) + 7) % 7;
  return daysToCivil(days - mondayBased);
}

function nextBinCivil(c: Civil, period: Period): Civil {
  if (period === 'day') return daysToCivil(civilToDays(c) + 1);
  if (period === 'week') return daysToCivil(civilToDays(c) + 7);
  return c.m === 12 ? { y: c.y + 1, m: 1, d: 1 } : { y: c.y, m: c.m + 1, d: 1 };
}

/** True for `YYYY-MM-DD` naming a real calendar date. */
export function isDateOnly(value: string): boolean {
  const match = DATE_ONLY.exec(value);
  if (!match) return false;
  const c = { y: Number(match[1]), m: Number(match[2]), d: Number(match[3]) };
  return c.m >= 1 && c.m <= 12 && sameCivil(daysToCivil(civilToDays(c)), c);
}

/** True for an ISO 8601 date-time with `Z` or an offset (a naive local time would be ambiguous). */
export function isIsoInstant(value: string): boolean {
  return isoInstant.safeParse(value).success;
}

/**
 * Resolves a range or `within` bound: an ISO instant as given, a date-only `YYYY-MM-DD` as the start
 * of that day in `tz` (so `2025-03-01`..`2025-04-01` is exactly March there). Null when neither.
 */
export function resolveInstant(value: string, tz: string): Date | null {
  if (isIsoInstant(value)) return new Date(Date.parse(value));
  const match = DATE_ONLY.exec(value);
  if (!match || !isDateOnly(value)) return null;
  return new Date(startOfLocalDay({ y: Number(match[1]), m: Number(match[2]), d: Number(match[3]) }, tz));
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `2025-03-09T00:00:00-05:00`: local wall time plus the offset in force at that instant. */
export function formatInZone(ms: number, tz: string): string {
  const w = wallClock(ms, tz);
  const offsetSeconds = Math.round(zoneOffsetMs(ms, tz) / 1000);
  const abs = Math.abs(offsetSeconds);
  const sign = offsetSeconds < 0 ? '-' : '+';
  // Pre-1900 local mean times have second offsets; keep them rather than misstate the instant.
  const secs = abs % 60 === 0 ? '' : `:${pad(abs % 60)}`;
  const offset = `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${secs}`;
  // ISO 8601's expanded years (±YYYYYY) outside 0000-9999: a bin may end in the year 10000.
  const year = w.y >= 0 && w.y <= 9999 ? pad(w.y, 4) : `${w.y < 0 ? '-' : '+'}${pad(Math.abs(w.y), 6)}`;
  return `${year}-${pad(w.m)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}${offset}`;
}

/** Start of the calendar bin (in `tz`) that contains `instant`. */
export function binStartOf(instant: Date, period: Period, tz: string): Date {
  return new Date(startOfLocalDay(binStartCivil(wallClock(instant.getTime(), tz), period), tz));
}

function resolveRange(range: BinRange): { start: number; end: number } {
  const start = resolveInstant(range.start, range.tz);
  const end = resolveInstant(range.end, range.tz);
  if (!start || !end) throw new RangeError('range start and end must be ISO 8601 instants or dates');
  return { start: start.getTime(), end: end.getTime() };
}

/**
 * Number of bins from the one containing `start` to the one containing the last instant before `end`,
 * by calendar arithmetic so a century-long request costs nothing to reject. 0 when start >= end.
 * Throws RangeError on bounds that are not instants or dates (validate with the chart schema first).
 */
export function countBins(range: BinRange): number {
  const { start, end } = resolveRange(range);
  if (start >= end) return 0;
  const first = binStartCivil(wallClock(start, range.tz), range.period);
  const last = binStartCivil(wallClock(end - 1, range.tz), range.period);
  if (range.period === 'month') return (last.y - first.y) * 12 + (last.m - first.m) + 1;
  const days = civilToDays(last) - civilToDays(first);
  return (range.period === 'week' ? days / 7 : days) + 1;
}

/**
 * The bins themselves, whole calendar periods (not clipped to the range), empty ones included, but
 * not a day the zone skipped (it has no instants).
 * Unbounded by design: callers pass ranges that passed the chart schema's bin limit.
 */
export function binsOf(range: BinRange): Bin[] {
  const { start, end } = resolveRange(range);
  const bins: Bin[] = [];
  if (start >= end) return bins;
  let civil = binStartCivil(wallClock(start, range.tz), range.period);
  let binStart = startOfLocalDay(civil, range.tz);
  while (binStart < end) {
    civil = nextBinCivil(civil, range.period);
    const binEnd = startOfLocalDay(civil, range.tz);
    // A day the zone skipped (Pacific/Apia's 2011-12-30) starts where the next one does: no bin, or
    // the next day's events were counted in it as well (found by probing).
    if (binEnd === binStart) continue;
    bins.push({
      start: new Date(binStart),
      end: new Date(binEnd),
      startIso: formatInZone(binStart, range.tz),
      endIso: formatInZone(binEnd, range.tz),
    });
    binStart = binEnd;
  }
  return bins;
}
