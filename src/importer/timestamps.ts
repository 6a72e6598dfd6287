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

/** An offset may have seconds (`-00:44:30`): charts print a zone's offset before ~1972 so, and read it back. */
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2}(?::\d{2})?)?)?$/;
/**
 * ISO 8601's basic format (`20250406T000000Z`), which the extended one's pattern refused (found by
 * probing). Only with its `T`: eight digits alone are refused when they also read as a date
 * (`basicDateAlone`), else an epoch time in seconds.
 */
const ISO_BASIC =
  /^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?:\d{2})?)?$/;
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const EIGHT_DIGITS = /^\d{8}$/;
/** 400 Gregorian years, a whole number of days: how `utcMs` reads years 0-99 that `Date.UTC` moves. */
const CYCLE_MS = 146_097 * 86_400_000;

/** `Date.UTC` of the fields as written: it reads years 0-99 as 1900-1999 (`0001-01-01` became 1901). */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  return y < 100 ? Date.UTC(y + 400, mo, d, h, mi, s) - CYCLE_MS : Date.UTC(y, mo, d, h, mi, s);
}

/**
 * Eight digits that name a calendar day (`20240102`, GA4's `event_date`) are ISO 8601's basic date as
 * much as epoch seconds (1970-08-23): refused with both readings, never guessed.
 */
function basicDateAlone(text: string): TimeResult | undefined {
  if (!EIGHT_DIGITS.test(text)) return undefined;
  const [y, mo, d] = [Number(text.slice(0, 4)), Number(text.slice(4, 6)) - 1, Number(text.slice(6))];
  const day = new Date(utcMs(y, mo, d, 0, 0, 0));
  // A day outside the stored years is no reading at all: such digits stay epoch seconds.
  if (y < 1900 || y > 2199 || day.getUTCMonth() !== mo || day.getUTCDate() !== d) return undefined;
  const date = `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}`;
  const seconds = toIso(Number(text) * 1000);
  return {
    ok: false,
    reason: `timestamp ${text} is ambiguous: the date ${date} or epoch seconds (${seconds}); write ${date} (or ${text}T000000Z), or the time in milliseconds`,
  };
}

/**
 * `n` seconds in whole milliseconds, truncated, read off its decimal digits: `n * 1000` in binary
 * floating point makes 1.001 s 1000.9999… ms. Times are kept to the millisecond by truncation, as the
 * service and `Date` keep them: rounding moved 23:59:59.9996 into the next day, month or year.
 */
function secondsToMs(n: number, text: string): number {
  const m = /^\+?(\d+)(?:\.(\d*))?$/.exec(text);
  if (!m) return Math.floor(n * 1000);
  return Number(m[1]) * 1000 + Number(`${m[2] ?? ''}000`.slice(0, 3));
}

/** An epoch time (`text`: as written, when it was text), seconds or milliseconds by magnitude. */
export function fromEpoch(n: number, text = String(n)): TimeResult {
  if (!Number.isFinite(n)) return { ok: false, reason: `epoch time ${n} is out of range` };
  // Before 1970 too (to 1900, as README says), by the same magnitudes: -86400 was refused.
  const size = Math.abs(n);
  if (size < SECONDS_BELOW) return { ok: true, ms: secondsToMs(n, text) };
  if (size < MS_BELOW) return { ok: true, ms: Math.floor(n) };
  return { ok: false, reason: `epoch time ${n} is too large for seconds or milliseconds` };
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Offsets lie within −12 h and +14 h: every instant a local day's wall times name lies within 15 h of it. */
const REACH_MS = 15 * HOUR_MS;
/** Offsets are sampled this often around a day; tz rules never change twice within three hours. */
const SAMPLE_MS = 3 * HOUR_MS;

/**
 * What a local calendar day needs to turn its wall times into instants: the offset, when the zone
 * keeps one from 15 h before the day to 15 h after it (then every wall time of the day is wall − offset,
 * exactly), else the offsets seen around it (a transition day, solved per value).
 */
type DayRule = number | readonly number[];

function sampleDay(tz: string, day: number): DayRule {
  const start = day * DAY_MS - REACH_MS;
  const end = (day + 1) * DAY_MS + REACH_MS;
  const seen: number[] = [];
  // 54 h is a multiple of SAMPLE_MS: both ends are sampled.
  for (let t = start; t <= end; t += SAMPLE_MS) {
    const offset = zoneOffsetMs(t, tz);
    if (!seen.includes(offset)) seen.push(offset);
  }
  return seen.length === 1 ? (seen[0] as number) : seen;
}

/**
 * Day rules per zone. Records come in runs of one zone and nearby days, so the last day is checked
 * first; a new day costs 19 Intl lookups, once.
 */
const rules = new Map<string, Map<number, DayRule>>();
let lastTz = '';
let lastDay = Number.NaN;
let lastRule: DayRule = 0;

function ruleFor(tz: string, day: number): DayRule {
  if (day === lastDay && tz === lastTz) return lastRule;
  let zone = rules.get(tz);
  if (!zone) {
    zone = new Map();
    rules.set(tz, zone);
  }
  let rule = zone.get(day);
  if (rule === undefined) {
    rule = sampleDay(tz, day);
    // 100,000 days are 270 years: only a pathological input gets here.
    if (zone.size >= 100_000) zone.clear();
    zone.set(day, rule);
  }
  lastTz = tz;
  lastDay = day;
  lastRule = rule;
  return rule;
}

/**
 * A wall time on a day the offset changes. Each offset seen names a candidate instant, valid when the
 * zone has that offset at it. A repeated time (two valid) is the earlier instant; a skipped one (none
 * valid) is read with the offset in force before the gap, which moves it forward by the gap: 02:30 on
 * a day that jumps from 02:00 to 03:00 is 03:30 (Temporal's "compatible").
 */
function acrossTransition(wallMs: number, tz: string, offsets: readonly number[]): number {
  let valid = Number.POSITIVE_INFINITY;
  let earliest = Number.POSITIVE_INFINITY;
  for (const offset of offsets) {
    const instant = wallMs - offset;
    if (instant < valid && zoneOffsetMs(instant, tz) === offset) valid = instant;
    earliest = Math.min(earliest, instant);
  }
  // In a gap, the earliest candidate lies before the transition: its offset is the one before the gap.
  return valid !== Number.POSITIVE_INFINITY ? valid : wallMs - zoneOffsetMs(earliest, tz);
}

/** A wall-clock time in `tz` (as ms of the same fields read as UTC) → the instant it names. */
export function wallTimeToInstant(wallMs: number, tz: string): number {
  if (tz === 'UTC') return wallMs;
  const rule = ruleFor(tz, Math.floor(wallMs / DAY_MS));
  return typeof rule === 'number' ? wallMs - rule : acrossTransition(wallMs, tz, rule);
}

function fromIso(m: RegExpExecArray, text: string, tz: string): TimeResult {
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  // Truncated to the millisecond, as `Date` and the service read a finer fraction.
  const check = new Date(utcMs(...fields));
  const wall = check.getTime() + Number(`${frac}000`.slice(0, 3));
  if (
    check.getUTCMonth() !== fields[1] ||
    check.getUTCDate() !== fields[2] ||
    fields[3] > 23 ||
    fields[4] > 59 ||
    fields[5] > 59
  ) {
    return { ok: false, reason: `timestamp ${JSON.stringify(text)} is not a valid date and time` };
  }
  if (zone === undefined) return { ok: true, ms: wallTimeToInstant(wall, tz) };
  if (zone === 'Z' || zone === 'z') return { ok: true, ms: wall };
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replaceAll(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4) || '0');
  const seconds = Number(digits.slice(4) || '0');
  // RFC 3339 bounds an offset at ±23:59, as the service's schema does: +24:00 would name another day.
  if (hours > 23 || minutes > 59 || seconds > 59) {
    return {
      ok: false,
      reason: `timestamp ${JSON.stringify(text)} has UTC offset ${zone}; offsets lie within ±23:59`,
    };
  }
  return { ok: true, ms: wall - sign * ((hours * 60 + minutes) * 60 + seconds) * 1000 };
}

/** Any accepted timestamp value → instant. `undefined`/empty means "no timestamp", not an error. */
export function parseTimestamp(value: unknown, tz: string): TimeResult | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number') return basicDateAlone(String(value)) ?? fromEpoch(value);
  if (typeof value !== 'string')
    return { ok: false, reason: `timestamp must be a string or number, got ${typeof value}` };
  const text = value.trim();
  if (NUMERIC.test(text)) return basicDateAlone(text) ?? fromEpoch(Number(text), text);
  const m = ISO.exec(text) ?? ISO_BASIC.exec(text);
  if (!m)
    return {
      ok: false,
      reason: `timestamp ${JSON.stringify(text)} is not ISO 8601 or epoch seconds/milliseconds`,
    };
  const result = fromIso(m, text, tz);
  if (result.ok && CANONICAL.test(text)) result.iso = text;
  return result;
}

export const toIso = (ms: number): string => new Date(ms).toISOString();
