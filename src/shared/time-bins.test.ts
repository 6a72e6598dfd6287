import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BinRange,
  binStartOf,
  binsOf,
  countBins,
  formatInZone,
  isDateOnly,
  isIsoInstant,
  resolveInstant,
} from './time-bins.js';

const NY = 'America/New_York';
const HOUR = 3_600_000;

function hours(bin: { start: Date; end: Date }): number {
  return (bin.end.getTime() - bin.start.getTime()) / HOUR;
}

describe('resolveInstant', () => {
  it('takes ISO instants as given, offsets included', () => {
    expect(resolveInstant('2025-03-09T12:00:00+02:00', NY)?.toISOString()).toBe('2025-03-09T10:00:00.000Z');
    expect(resolveInstant('2025-03-09T12:00:00.250Z', NY)?.toISOString()).toBe('2025-03-09T12:00:00.250Z');
  });

  it('reads a date-only bound as the start of that day in the zone', () => {
    expect(resolveInstant('2025-01-15', NY)?.toISOString()).toBe('2025-01-15T05:00:00.000Z');
    expect(resolveInstant('2025-07-15', NY)?.toISOString()).toBe('2025-07-15T04:00:00.000Z');
    expect(resolveInstant('2025-07-15', 'Asia/Kathmandu')?.toISOString()).toBe('2025-07-14T18:15:00.000Z');
  });

  it('rejects naive times, impossible dates and junk', () => {
    for (const bad of [
      '2025-03-09T00:00:00',
      '2025-02-30',
      '2025-02-30T00:00:00Z',
      '2025-13-01',
      'yesterday',
      '',
    ]) {
      expect(resolveInstant(bad, NY)).toBeNull();
    }
    expect(isDateOnly('2024-02-29')).toBe(true);
    expect(isDateOnly('2025-02-29')).toBe(false);
    expect(isIsoInstant('2025-03-09T00:00:00-05:00')).toBe(true);
  });
});

describe('formatInZone', () => {
  it('writes local wall time with the offset in force', () => {
    const ms = Date.parse('2025-03-09T05:00:00Z');
    expect(formatInZone(ms, NY)).toBe('2025-03-09T00:00:00-05:00');
    expect(formatInZone(Date.parse('2025-03-10T04:00:00Z'), NY)).toBe('2025-03-10T00:00:00-04:00');
    expect(formatInZone(ms, 'UTC')).toBe('2025-03-09T05:00:00+00:00');
    expect(formatInZone(ms, 'Asia/Kolkata')).toBe('2025-03-09T10:30:00+05:30');
  });
});

describe('binsOf at the ends of the years a range may name', () => {
  // en-US writes 1 BC as year 1 without an era: the first bin of a year-1 range west of Greenwich
  // (local 0000-12-31) was read a year late, past the range's end, and charts had no bins at all.
  it('starts a year-1 range west of Greenwich in the local year 0', () => {
    const bins = binsOf({
      start: '0001-01-01T00:00:00Z',
      end: '0001-01-03T00:00:00Z',
      period: 'day',
      tz: NY,
    });
    expect(bins.map((b) => b.startIso)).toEqual([
      '0000-12-31T00:00:00-04:56:02',
      '0001-01-01T00:00:00-04:56:02',
      '0001-01-02T00:00:00-04:56:02',
    ]);
    expect(bins.map(hours)).toEqual([24, 24, 24]);
  });

  it('writes a bin end in the year 10000 as an ISO 8601 expanded year', () => {
    const bins = binsOf({
      start: '9999-12-31',
      end: '9999-12-31T12:00:00Z',
      period: 'day',
      tz: 'Pacific/Kiritimati',
    });
    expect(bins[0]?.startIso).toBe('9999-12-31T00:00:00+14:00');
    expect(bins[0]?.endIso).toBe('+010000-01-01T00:00:00+14:00');
    expect(Date.parse(bins[0]!.endIso)).toBe(bins[0]!.end.getTime());
  });
});

describe('binsOf in a zone that skipped a day', () => {
  // Pacific/Apia went from 2011-12-29 at -10:00 to 2011-12-31 at +14:00: 12-30 has no instants. Its
  // bin started and ended where 12-31 starts, and the charts counted 12-31's events in both.
  it('makes no bin of it, and every bin has a length', () => {
    const bins = binsOf({ start: '2011-12-29', end: '2012-01-01', period: 'day', tz: 'Pacific/Apia' });
    expect(bins.map((b) => b.startIso)).toEqual(['2011-12-29T00:00:00-10:00', '2011-12-31T00:00:00+14:00']);
    expect(bins.map(hours)).toEqual([24, 24]);
    expect(bins[0]?.end.getTime()).toBe(bins[1]?.start.getTime());
  });
});

describe('binsOf / countBins by day across DST in New York', () => {
  it('makes 2025-03-09 a 23-hour day', () => {
    const range: BinRange = { start: '2025-03-08', end: '2025-03-11', period: 'day', tz: NY };
    const bins = binsOf(range);
    expect(bins.map((b) => b.startIso)).toEqual([
      '2025-03-08T00:00:00-05:00',
      '2025-03-09T00:00:00-05:00',
      '2025-03-10T00:00:00-04:00',
    ]);
    expect(bins.map(hours)).toEqual([24, 23, 24]);
    expect(bins[1]?.endIso).toBe('2025-03-10T00:00:00-04:00');
    expect(countBins(range)).toBe(3);
  });

  it('makes 2025-11-02 a 25-hour day', () => {
    const range: BinRange = {
      start: '2025-11-02T12:00:00Z',
      end: '2025-11-03T05:00:00Z',
      period: 'day',
      tz: NY,
    };
    const bins = binsOf(range);
    expect(bins).toHaveLength(1);
    expect(bins[0]?.startIso).toBe('2025-11-02T00:00:00-04:00');
    expect(bins[0]?.endIso).toBe('2025-11-03T00:00:00-05:00');
    expect(hours(bins[0]!)).toBe(25);
    expect(countBins(range)).toBe(1);
  });

  it('keeps bins whole, not clipped to the range', () => {
    const bins = binsOf({
      start: '2025-03-08T17:30:00Z',
      end: '2025-03-09T06:00:00Z',
      period: 'day',
      tz: NY,
    });
    expect(bins.map((b) => b.startIso)).toEqual(['2025-03-08T00:00:00-05:00', '2025-03-09T00:00:00-05:00']);
    expect(bins[0]?.start.toISOString()).toBe('2025-03-08T05:00:00.000Z');
  });

  it('adds no bin for an end on a boundary, one for an end just past it', () => {
    const onBoundary: BinRange = {
      start: '2025-03-01',
      end: '2025-03-03T00:00:00-05:00',
      period: 'day',
      tz: NY,
    };
    expect(countBins(onBoundary)).toBe(2);
    expect(binsOf(onBoundary).at(-1)?.endIso).toBe('2025-03-03T00:00:00-05:00');
    const pastIt = { ...onBoundary, end: '2025-03-03T00:00:00.001-05:00' };
    expect(countBins(pastIt)).toBe(3);
    expect(binsOf(pastIt)).toHaveLength(3);
  });

  it('finds the start of a day whose midnight a DST gap skipped', () => {
    // Brazil sprang forward at 00:00 on 2018-11-04: that day began at 01:00 local.
    const bins = binsOf({ start: '2018-11-03', end: '2018-11-05', period: 'day', tz: 'America/Sao_Paulo' });
    expect(bins.map((b) => b.startIso)).toEqual(['2018-11-03T00:00:00-03:00', '2018-11-04T01:00:00-02:00']);
    expect(bins.map(hours)).toEqual([24, 23]);
  });
});

describe('ISO weeks', () => {
  it('start on Monday and run across the year boundary', () => {
    const range: BinRange = { start: '2024-12-25', end: '2025-01-10', period: 'week', tz: 'UTC' };
    const bins = binsOf(range);
    expect(bins.map((b) => b.startIso)).toEqual([
      '2024-12-23T00:00:00+00:00',
      '2024-12-30T00:00:00+00:00',
      '2025-01-06T00:00:00+00:00',
    ]);
    expect(bins.at(-1)?.endIso).toBe('2025-01-13T00:00:00+00:00');
    expect(countBins(range)).toBe(3);
  });

  it('span 167 hours over the March DST change', () => {
    const bins = binsOf({ start: '2025-03-03', end: '2025-03-17', period: 'week', tz: NY });
    expect(bins.map(hours)).toEqual([167, 168]);
  });

  it('count a Sunday start as the week that began the Monday before', () => {
    expect(binStartOf(new Date('2025-01-05T12:00:00Z'), 'week', 'UTC').toISOString()).toBe(
      '2024-12-30T00:00:00.000Z',
    );
  });
});

describe('months', () => {
  it('run from the month of start to the month of the last instant', () => {
    const range: BinRange = { start: '2025-01-15', end: '2025-04-01', period: 'month', tz: NY };
    const bins = binsOf(range);
    expect(bins.map((b) => [b.startIso, b.endIso])).toEqual([
      ['2025-01-01T00:00:00-05:00', '2025-02-01T00:00:00-05:00'],
      ['2025-02-01T00:00:00-05:00', '2025-03-01T00:00:00-05:00'],
      ['2025-03-01T00:00:00-05:00', '2025-04-01T00:00:00-04:00'],
    ]);
    expect(bins.map(hours)).toEqual([31 * 24, 28 * 24, 31 * 24 - 1]);
    expect(countBins(range)).toBe(3);
    expect(countBins({ ...range, start: '2023-11-30', end: '2025-02-01T00:00:01Z' })).toBe(15);
  });
});

describe('degenerate and invalid ranges', () => {
  it('has no bins when start >= end', () => {
    const range: BinRange = { start: '2025-03-02', end: '2025-03-01', period: 'day', tz: NY };
    expect(countBins(range)).toBe(0);
    expect(binsOf(range)).toEqual([]);
    expect(countBins({ ...range, end: range.start })).toBe(0);
  });

  it('counts a huge range without walking it', () => {
    // Expected value from Python: (date(9999,1,1) - date(1000,1,1)).days
    expect(countBins({ start: '1000-01-01', end: '9999-01-01', period: 'day', tz: 'UTC' })).toBe(3_286_817);
  });

  it('throws on bounds that are not instants', () => {
    expect(() => countBins({ start: 'soon', end: '2025-01-01', period: 'day', tz: 'UTC' })).toThrow(
      RangeError,
    );
  });
});

describe('countBins and binsOf agree (property)', () => {
  const zones = ['UTC', NY, 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/Sao_Paulo'];
  it('on random ranges: same count, contiguous whole bins covering the range, labels parse back', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom('day' as const, 'week' as const, 'month' as const),
        fc.integer({ min: Date.parse('2015-01-01'), max: Date.parse('2030-01-01') }),
        fc.integer({ min: 1, max: 120 * 24 * HOUR }),
        (tz, period, start, length) => {
          const range: BinRange = {
            start: new Date(start).toISOString(),
            end: new Date(start + length).toISOString(),
            period,
            tz,
          };
          const bins = binsOf(range);
          expect(bins.length).toBe(countBins(range));
          expect(bins[0]!.start.getTime()).toBeLessThanOrEqual(start);
          expect(bins.at(-1)!.end.getTime()).toBeGreaterThanOrEqual(start + length);
          expect(bins.at(-1)!.start.getTime()).toBeLessThan(start + length);
          bins.forEach((bin, i) => {
            expect(Date.parse(bin.startIso)).toBe(bin.start.getTime());
            expect(Date.parse(bin.endIso)).toBe(bin.end.getTime());
            if (i > 0) expect(bin.start.getTime()).toBe(bins[i - 1]!.end.getTime());
            expect(binStartOf(bin.start, period, tz).getTime()).toBe(bin.start.getTime());
            if (period === 'day') expect([23, 23.5, 24, 24.5, 25]).toContain(hours(bin));
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
