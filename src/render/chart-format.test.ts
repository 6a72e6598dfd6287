import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { bar, paint, sparkline } from './bars.js';
import { binLabel, formatNumber, humanDuration, isoWeek, rowsToCsv, rowsToJsonl } from './chart-format.js';

describe('binLabel', () => {
  it('reads the bin start in the chart zone, whatever offset the server wrote it with', () => {
    expect(binLabel('2025-03-09T00:00:00-05:00', 'day', 'America/New_York')).toBe('2025-03-09');
    // The same instant written in UTC is still the 9th in New York.
    expect(binLabel('2025-03-09T05:00:00Z', 'day', 'America/New_York')).toBe('2025-03-09');
    expect(binLabel('2025-03-01T00:00:00+09:00', 'month', 'Asia/Tokyo')).toBe('2025-03');
    expect(binLabel('2025-03-03T00:00:00+01:00', 'week', 'Europe/Paris')).toBe('2025-W10 Mar 3');
    expect(binLabel('not a time', 'day', 'UTC')).toBe('not a time');
  });

  it('takes a bin start without an offset as the wall time it names, whatever the zones', () => {
    expect(binLabel('2025-01-06', 'day', 'America/New_York')).toBe('2025-01-06');
    expect(binLabel('2025-01-06T00:00:00', 'day', 'America/New_York')).toBe('2025-01-06');
    expect(binLabel('2025-01-06T00:00:00', 'day', 'Pacific/Kiritimati')).toBe('2025-01-06');
    expect(binLabel('2025-03-03 00:00', 'week', 'UTC')).toBe('2025-W10 Mar 3');
  });

  it('numbers ISO weeks across year boundaries', () => {
    expect(isoWeek(2024, 12, 30)).toEqual({ year: 2025, week: 1 });
    expect(isoWeek(2021, 1, 3)).toEqual({ year: 2020, week: 53 });
    expect(isoWeek(2026, 12, 28)).toEqual({ year: 2026, week: 53 });
    expect(binLabel('2024-12-30T00:00:00Z', 'week', 'UTC')).toBe('2025-W01 Dec 30');
  });
});

describe('numbers and durations', () => {
  it('shows whole numbers as they are, others to two decimals, and fractions below 1 to three digits', () => {
    expect([12, 2.5, 7 / 3, 0, 123456789.123].map(formatNumber)).toEqual([
      '12',
      '2.5',
      '2.33',
      '0',
      '123456789.12',
    ]);
    // Costs: a tenth of a cent is not 0, and 0.0132 is not 0.005.
    expect([0.001, 0.0132, 0.005, 2 / 3, -0.00125, 1e-7].map(formatNumber)).toEqual([
      '0.001',
      '0.0132',
      '0.005',
      '0.667',
      '-0.00125',
      '1e-7',
    ]);
  });

  it('puts seconds in human units', () => {
    expect([0, 0.2, 1, 45, 65, 600, 3599.6, 3723, 90_000, Number.NaN].map(humanDuration)).toEqual([
      '0s',
      '<1s',
      '1s',
      '45s',
      '1m 05s',
      '10m 00s',
      '1h 00m',
      '1h 02m',
      '1d 01h',
      '0s',
    ]);
  });
});

describe('bars', () => {
  it('scales to the max with eighth-cell resolution and keeps any non-zero value visible', () => {
    expect(bar(10, 10)).toBe('█'.repeat(20));
    expect(bar(5, 10)).toBe('█'.repeat(10));
    expect(bar(1, 16, 2)).toBe('▏');
    expect(bar(0.0001, 10)).toBe('▏');
    expect(bar(0, 10)).toBe('');
    expect(bar(3, 0)).toBe('');
    expect(sparkline([0, 5, 10])).toBe('▁▅█');
    expect(sparkline([0, 0])).toBe('▁▁');
  });

  it('paints only when colour is on', () => {
    expect(paint('x', 'cyan', false)).toBe('x');
    expect(paint('x', 'cyan', true)).toBe('\u001b[36mx\u001b[39m');
  });
});

describe('rows for csv and jsonl', () => {
  const columns = ['name', 'n'];
  const rows = [
    { name: 'plain', n: 1 },
    { name: 'a, "quoted"\nline', n: 2.5 },
  ];

  it('writes CSV that a CSV parser reads back to the same values', () => {
    const text = rowsToCsv(columns, rows);
    expect(parse(text, { columns: true })).toEqual([
      { name: 'plain', n: '1' },
      { name: 'a, "quoted"\nline', n: '2.5' },
    ]);
    expect(rowsToCsv(columns, [])).toBe('name,n\n');
  });

  it('writes one JSON object per line, numbers as numbers', () => {
    const lines = rowsToJsonl(columns, rows).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(rows);
    expect(rowsToJsonl(columns, [])).toBe('');
  });
});
