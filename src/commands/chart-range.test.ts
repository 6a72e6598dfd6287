import { describe, expect, it } from 'vitest';
import { chartRangeSchema } from '../shared/chart-filters.js';
import { binsOf } from '../shared/time-bins.js';
import { type ChartEnv, checkPeriod, checkTimeZone, rangeBounds, rangeFlagLabel } from './chart-range.js';
import { UsageError } from './errors.js';

// Sunday 2025-03-09, 03:30 UTC: still Saturday the 8th in New York, already the 9th in Tokyo.
const env: ChartEnv = { now: new Date('2025-03-09T03:30:00Z'), defaultTz: 'UTC' };

describe('--last', () => {
  it('defaults to the last 30 days, today included, as dates in the zone', () => {
    expect(rangeBounds({}, env, 'UTC')).toEqual({ start: '2025-02-08', end: '2025-03-10' });
    expect(rangeBounds({}, env, 'America/New_York')).toEqual({ start: '2025-02-07', end: '2025-03-09' });
    expect(rangeBounds({}, env, 'Asia/Tokyo')).toEqual({ start: '2025-02-08', end: '2025-03-10' });
  });

  it('counts days, ISO weeks (Monday first) and months back to whole periods', () => {
    expect(rangeBounds({ last: '1d' }, env, 'UTC')).toEqual({ start: '2025-03-09', end: '2025-03-10' });
    // The 9th is a Sunday: its week began Monday the 3rd.
    expect(rangeBounds({ last: '2w' }, env, 'UTC')).toEqual({ start: '2025-02-24', end: '2025-03-10' });
    // Up to today, as with --to <today>: the rest of the month is no bins of empty days to come.
    expect(rangeBounds({ last: '3m' }, env, 'UTC')).toEqual({ start: '2025-01-01', end: '2025-03-10' });
    expect(rangeBounds({ last: '14m' }, env, 'UTC')).toEqual({ start: '2024-02-01', end: '2025-03-10' });
    expect(rangeBounds({ last: '1w' }, { ...env, now: new Date('2025-03-05T12:00:00Z') }, 'UTC')).toEqual({
      start: '2025-03-03',
      end: '2025-03-06',
    });
    for (const last of ['1w', '2w', '3m']) {
      expect(rangeBounds({ last }, env, 'UTC')).toEqual(rangeBounds({ last, to: '2025-03-09' }, env, 'UTC'));
    }
  });

  it('gives exactly n bins of the matching period', () => {
    for (const [last, period, n] of [
      ['30d', 'day', 30],
      ['12w', 'week', 12],
      ['6m', 'month', 6],
    ] as const) {
      const bounds = rangeBounds({ last }, env, 'Europe/Paris');
      expect(binsOf({ ...bounds, period, tz: 'Europe/Paris' })).toHaveLength(n);
    }
  });

  it('counts back from --to when given (a --to date is included)', () => {
    expect(rangeBounds({ last: '7d', to: '2025-01-31' }, env, 'UTC')).toEqual({
      start: '2025-01-25',
      end: '2025-02-01',
    });
    // An instant --to is exclusive: its last included day is the one before midnight.
    expect(rangeBounds({ last: '2d', to: '2025-02-01T00:00:00Z' }, env, 'UTC')).toEqual({
      start: '2025-01-30',
      end: '2025-02-01T00:00:00Z',
    });
  });

  it('reaches back the default 30 days from a --to given alone', () => {
    expect(rangeBounds({ to: '2025-03-31' }, env, 'UTC')).toEqual({ start: '2025-03-02', end: '2025-04-01' });
  });

  it('rejects other spans, naming the flag', () => {
    for (const last of ['30', '0d', '3y', 'd', '-1d']) {
      const thrown = (() => {
        try {
          rangeBounds({ last }, env, 'UTC');
        } catch (error) {
          return error;
        }
      })();
      expect(thrown).toBeInstanceOf(UsageError);
      expect(thrown).toMatchObject({
        message: `--last "${last}": expected a count and a unit d, w or m`,
        hint: 'e.g. --last 30d, --last 12w, --last 6m',
      });
    }
  });
});

describe('the ends of the calendar', () => {
  // Each was a RangeError ("this is a bug", exit 1) or the service's 400 about range.start (found by probing).
  it('reaches back to the year 1 and no further, and ends a range by 9999-12-30, naming the flag', () => {
    const days = Math.floor((Date.parse('2025-03-09') - Date.parse('0001-01-01')) / 86_400_000) + 1;
    expect(rangeBounds({ last: `${days}d` }, env, 'UTC').start).toBe('0001-01-01');
    expect(rangeBounds({ last: `${12 * 2024 + 3}m` }, env, 'UTC').start).toBe('0001-01-01');
    for (const last of [`${days + 1}d`, '99999999999d', '99999999999w', `${12 * 2024 + 4}m`]) {
      expect(() => rangeBounds({ last }, env, 'UTC')).toThrow(
        `--last "${last}": reaches back before the year 1`,
      );
    }
    expect(rangeBounds({ from: '9999-12-01', to: '9999-12-30' }, env, 'UTC')).toEqual({
      start: '9999-12-01',
      end: '9999-12-31',
    });
    expect(() => rangeBounds({ from: '9999-12-01', to: '9999-12-31' }, env, 'UTC')).toThrow(
      '--to "9999-12-31": the last day a range can include is 9999-12-30',
    );
  });
});

describe('--from / --to', () => {
  it('passes dates and instants through; a --to date includes that day', () => {
    expect(rangeBounds({ from: '2025-03-01', to: '2025-03-31' }, env, 'UTC')).toEqual({
      start: '2025-03-01',
      end: '2025-04-01',
    });
    expect(
      rangeBounds({ from: '2025-03-01T09:00:00+01:00', to: '2025-03-02T09:00:00Z' }, env, 'UTC'),
    ).toEqual({
      start: '2025-03-01T09:00:00+01:00',
      end: '2025-03-02T09:00:00Z',
    });
    expect(rangeBounds({ from: '2024-12-31', to: '2024-12-31' }, env, 'UTC').end).toBe('2025-01-01');
  });

  // Found by probing: a time copied from the user's data, or from a chart's own bins, was refused.
  it('reads the other ISO 8601 forms cas import reads, a time without an offset in --tz', () => {
    const start = (from: string, tz = 'UTC') => rangeBounds({ from, to: '2025-03-10' }, env, tz).start;
    expect(start('2025-03-09T05:00Z')).toBe('2025-03-09T05:00:00.000Z');
    expect(start('2025-03-09 05:00:00+05')).toBe('2025-03-09T00:00:00.000Z');
    expect(start('20250309T050000Z')).toBe('2025-03-09T05:00:00.000Z');
    expect(start('2025-03-09T00:00', 'America/New_York')).toBe('2025-03-09T05:00:00.000Z');
    expect(start('2025-03-09T00:00:00', 'Asia/Kathmandu')).toBe('2025-03-08T18:15:00.000Z');
    // A bin start as charts print it for Monrovia in 1970, its offset in seconds.
    expect(start('1970-01-01T00:00:00-00:44:30')).toBe('1970-01-01T00:44:30.000Z');
    const to = rangeBounds({ from: '2025-03-01', to: '2025-03-09T12:00' }, env, 'Asia/Tokyo').end;
    expect(to).toBe('2025-03-09T03:00:00.000Z');
  });

  it('runs --from alone to the end of today in the zone', () => {
    expect(rangeBounds({ from: '2025-03-01' }, env, 'America/New_York')).toEqual({
      start: '2025-03-01',
      end: '2025-03-09',
    });
  });

  it('produces ranges the shared schema accepts', () => {
    const bounds = rangeBounds({ from: '2025-03-01', to: '2025-03-31' }, env, 'UTC');
    expect(chartRangeSchema.safeParse({ ...bounds, period: 'week', tz: 'UTC' }).success).toBe(true);
  });

  it('rejects malformed bounds and --from with --last, naming the flags', () => {
    expect(() => rangeBounds({ from: '2025-02-30' }, env, 'UTC')).toThrow(
      /^--from "2025-02-30": expected a date/,
    );
    expect(() => rangeBounds({ from: '2025-03-01', to: 'yesterday' }, env, 'UTC')).toThrow(
      /^--to "yesterday"/,
    );
    // Numbers are no times here: neither epoch seconds nor a basic date.
    for (const from of ['20250301', '1740787200', '2025-03-01T25:00'])
      expect(() => rangeBounds({ from }, env, 'UTC')).toThrow(/one without an offset is read in --tz/);
    expect(() => rangeBounds({ from: '2025-03-01', last: '7d' }, env, 'UTC')).toThrow(/^--from and --last/);
  });

  it('labels the flags that set the bounds', () => {
    expect(rangeFlagLabel({})).toBe('--last 30d (the default range)');
    expect(rangeFlagLabel({ from: 'a', to: 'b' })).toBe('--from a --to b');
  });
});

describe('--period and --tz', () => {
  it('accepts the three periods and IANA zones only', () => {
    expect(checkPeriod('week')).toBe('week');
    expect(() => checkPeriod('year')).toThrow('--period "year": expected day, week or month');
    expect(checkTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(() => checkTimeZone('Mars/Olympus')).toThrow('--tz "Mars/Olympus": unknown time zone');
  });
});
