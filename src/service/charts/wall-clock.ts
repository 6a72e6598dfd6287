import type { Period } from '../../shared/time-bins.js';
import { formatInZone, zoneOffsetMs } from '../../shared/time-bins.js';

/**
 * Calendar arithmetic on local wall time, for `within.period` ("N units back from range.end in tz").
 * A day back is the same wall time yesterday (23 or 25 hours across DST); a month back clamps the
 * day (31 March → 28/29 February), as a person counting on a calendar would.
 */

const WALL = /^(-?\d+)-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/;
const DAY_MS = 86_400_000;

interface Wall {
  y: number;
  m: number; // 0-11
  d: number;
  timeMs: number;
}

function wallOf(ms: number, tz: string): Wall {
  const match = WALL.exec(formatInZone(ms, tz));
  if (!match) throw new RangeError(`cannot read the wall time of ${ms} in ${tz}`);
  const [, y, m, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  // formatInZone shows whole seconds; keep the instant's milliseconds so a window edge is exact.
  const millis = ((ms % 1000) + 1000) % 1000;
  return { y, m: m - 1, d, timeMs: ((h * 60 + mi) * 60 + s) * 1000 + millis };
}

function daysInMonth(y: number, m: number): number {
  const date = new Date(0);
  date.setUTCFullYear(y, m + 1, 0);
  return date.getUTCDate();
}

/**
 * The instant showing wall time `wallMs` (wall time read as if UTC) in tz. A wall time inside a DST
 * gap does not exist; it resolves to the gap's length earlier (02:30 on a spring-forward day → 01:30).
 */
function instantOfWall(wallMs: number, tz: string): number {
  const first = wallMs - zoneOffsetMs(wallMs, tz);
  const offset = zoneOffsetMs(first, tz);
  return wallMs - offset;
}

function utcDays(y: number, m: number, d: number): number {
  const date = new Date(0);
  date.setUTCFullYear(y, m, d);
  return Math.round(date.getTime() / DAY_MS);
}

/** Windows reaching before this hold no events; clamping keeps Intl and SQL away from years before 1. */
export const EARLIEST = new Date(Date.UTC(1000, 0, 1));
const LONGEST_UNIT_MS = { day: 26 * 3_600_000, week: 7 * 26 * 3_600_000, month: 32 * DAY_MS } as const;

/** `instant` moved back `n` calendar units of `unit` in `tz` (never before EARLIEST). */
export function periodBack(instant: Date, n: number, unit: Period, tz: string): Date {
  if (instant.getTime() - n * LONGEST_UNIT_MS[unit] < EARLIEST.getTime()) return EARLIEST;
  const w = wallOf(instant.getTime(), tz);
  let days: number;
  if (unit === 'month') {
    const total = w.y * 12 + w.m - n;
    const y = Math.floor(total / 12);
    const m = total - y * 12;
    days = utcDays(y, m, Math.min(w.d, daysInMonth(y, m)));
  } else {
    days = utcDays(w.y, w.m, w.d) - (unit === 'week' ? 7 * n : n);
  }
  return new Date(instantOfWall(days * DAY_MS + w.timeMs, tz));
}
