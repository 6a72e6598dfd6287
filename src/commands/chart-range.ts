import { isTimeZone } from '../shared/primitives.js';
import { formatInZone, isDateOnly, PERIODS, type Period } from '../shared/time-bins.js';
import { UsageError } from './errors.js';
import { whenInstant } from './when-flag.js';

/**
 * `--from/--to/--last/--period/--tz` to a ChartRange. Whole calendar days are sent as dates
 * (`YYYY-MM-DD`, the start of that day in range.tz), so `--print-controls` reads like the command and
 * the service, not the CLI, resolves DST. `now` and the default zone are injected for tests.
 */

export interface RangeFlags {
  from?: string | undefined;
  to?: string | undefined;
  last?: string | undefined;
  period?: string | undefined;
  tz?: string | undefined;
}

export interface ChartEnv {
  now: Date;
  /** The system zone (Intl's resolved zone in the CLI). */
  defaultTz: string;
}

export interface RangeInput {
  start: string;
  end: string;
  period: string;
  tz: string;
}

export const DEFAULT_LAST = '30d';
const DAY_MS = 86_400_000;
const LAST = /^(\d+)([dwm])$/;
const FIRST_DAY = Math.floor(Date.parse('0001-01-01T00:00:00Z') / DAY_MS);
const LAST_DAY = '9999-12-30';

/** Day number since 1970-01-01 of a `YYYY-MM-DD` (calendar arithmetic only, no zone involved). */
function dayNumber(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

function dateOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

function monthStart(date: string, monthsBack: number): string {
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(5, 7)) - 1 - monthsBack;
  const first = new Date(0);
  first.setUTCFullYear(y, m, 1);
  return first.toISOString().slice(0, 10);
}

/** The local calendar date of an instant in `tz`. */
function localDate(ms: number, tz: string): string {
  return formatInZone(ms, tz).slice(0, 10);
}

/** A `--from`/`--to` value as the range takes it: a date as is, a time as `whenInstant` reads it in `tz`. */
function bound(value: string, flag: string, tz: string): string {
  if (isDateOnly(value)) return value;
  const instant = whenInstant(value, tz);
  if (instant !== undefined) return instant;
  throw new UsageError(
    `${flag} "${value}": expected a date YYYY-MM-DD or an ISO 8601 time (one without an offset is read in --tz)`,
    `e.g. ${flag} 2025-03-01 or ${flag} 2025-03-01T09:00:00Z`,
  );
}

/** `--to` as the range end: a date is inclusive (the whole day), an instant is exclusive as given. */
function endOf(to: string): string {
  if (!isDateOnly(to)) return to;
  // Its end, the next day, would be in the year 10000, which no ISO 8601 date spells (found by probing).
  if (to > LAST_DAY)
    throw new UsageError(
      `--to "${to}": the last day a range can include is ${LAST_DAY}`,
      `e.g. --to ${LAST_DAY}`,
    );
  return dateOf(dayNumber(to) + 1);
}

/** The last calendar day the range covers: the `--to` date, the day before a `--to` instant's end, or today. */
function anchorDay(to: string | undefined, env: ChartEnv, tz: string): string {
  if (to === undefined) return localDate(env.now.getTime(), tz);
  if (isDateOnly(to)) return to;
  return localDate(Date.parse(to) - 1, tz);
}

/** `--last 30d` ends with today (or `--to`) and reaches back to the start of whole days, ISO weeks or months. */
function lastRange(last: string, to: string | undefined, env: ChartEnv, tz: string): [string, string] {
  const match = LAST.exec(last);
  const n = Number(match?.[1] ?? 0);
  if (!match || n < 1) {
    throw new UsageError(
      `--last "${last}": expected a count and a unit d, w or m`,
      'e.g. --last 30d, --last 12w, --last 6m',
    );
  }
  const anchor = anchorDay(to, env, tz);
  const end = to === undefined ? dateOf(dayNumber(anchor) + 1) : endOf(to);
  const unit = match[2];
  // Before the year 1, dates are not ISO 8601 ones (a RangeError, "this is a bug": found by probing).
  const back = unit === 'm' ? 0 : unit === 'w' ? 7 * n : n - 1;
  const months = 12 * Number(anchor.slice(0, 4)) + Number(anchor.slice(5, 7)) - 1;
  if (dayNumber(anchor) - back < FIRST_DAY || (unit === 'm' && months - (n - 1) < 12)) {
    throw new UsageError(
      `--last "${last}": reaches back before the year 1`,
      'e.g. --last 30d, --last 12w, --last 6m',
    );
  }
  if (unit === 'd') return [dateOf(dayNumber(anchor) - (n - 1)), end];
  if (unit === 'w') {
    // 1970-01-01 was a Thursday; +3 makes Monday 0 (ISO weeks, like the bins).
    const monday = dayNumber(anchor) - ((((dayNumber(anchor) + 3) % 7) + 7) % 7);
    // Up to today as up to a --to: the rest of this week (month) was bins of days to come, empty,
    // diluting a chart's averages, and the same chart with --to <today> answered otherwise (found by probing).
    return [dateOf(monday - 7 * (n - 1)), end];
  }
  return [monthStart(anchor, n - 1), end];
}

export function checkPeriod(period: string): Period {
  const known = PERIODS.find((p) => p === period);
  if (!known) {
    throw new UsageError(`--period "${period}": expected day, week or month`, 'e.g. --period week');
  }
  return known;
}

export function checkTimeZone(tz: string, flag = '--tz'): string {
  if (!isTimeZone(tz)) {
    throw new UsageError(
      `${flag} "${tz}": unknown time zone`,
      'an IANA name, e.g. --tz Europe/Paris, --tz America/New_York or --tz UTC',
    );
  }
  return tz;
}

export function hasRangeBounds(flags: RangeFlags): boolean {
  return flags.from !== undefined || flags.to !== undefined || flags.last !== undefined;
}

/** A range's start and end as a `--controls` file gives them (either may be missing). */
export interface BaseBounds {
  start?: unknown;
  end?: unknown;
}

/**
 * The range's start and end from the flags (default `--last 30d`), in `tz`. Over a `--controls` file
 * (`base`), `--from` alone keeps the file's end and `--to` alone keeps its start: a flag overrides
 * only the field it names, as `--period` and `--tz` do.
 */
export function rangeBounds(
  flags: RangeFlags,
  env: ChartEnv,
  tz: string,
  base: BaseBounds = {},
): { start: string; end: string } {
  if (flags.from !== undefined && flags.last !== undefined) {
    throw new UsageError(
      '--from and --last both set the start of the range; give one of them',
      'e.g. --from 2025-03-01 --to 2025-03-31, or --last 30d',
    );
  }
  const from = flags.from === undefined ? undefined : bound(flags.from, '--from', tz);
  const to = flags.to === undefined ? undefined : bound(flags.to, '--to', tz);
  if (from !== undefined) {
    const end =
      to !== undefined
        ? endOf(to)
        : typeof base.end === 'string'
          ? base.end
          : dateOf(dayNumber(localDate(env.now.getTime(), tz)) + 1);
    return { start: from, end };
  }
  if (flags.last === undefined && to !== undefined && typeof base.start === 'string')
    return { start: base.start, end: endOf(to) };
  const [start, end] = lastRange(flags.last ?? DEFAULT_LAST, to, env, tz);
  return { start, end };
}

/** Label of the flags that set the bounds, for error messages about the range. */
export function rangeFlagLabel(flags: RangeFlags): string {
  const given = (['from', 'to', 'last'] as const).filter((k) => flags[k] !== undefined);
  if (given.length === 0) return `--last ${DEFAULT_LAST} (the default range)`;
  return given.map((k) => `--${k} ${flags[k]}`).join(' ');
}
