import { describe, expect, it } from 'vitest';
import { EARLIEST, periodBack } from './wall-clock.js';

const back = (iso: string, n: number, unit: 'day' | 'week' | 'month', tz: string) =>
  periodBack(new Date(iso), n, unit, tz).toISOString();

describe('periodBack (within.period measured back from range.end)', () => {
  it('moves back whole local days, so a day across spring-forward is 23 hours', () => {
    // Midnight 10 March (EDT) back one day is midnight 9 March (EST): 23 hours earlier.
    expect(back('2025-03-10T04:00:00Z', 1, 'day', 'America/New_York')).toBe('2025-03-09T05:00:00.000Z');
    // And across fall-back, 25 hours.
    expect(back('2025-11-03T05:00:00Z', 1, 'day', 'America/New_York')).toBe('2025-11-02T04:00:00.000Z');
    expect(back('2025-03-10T04:00:00Z', 1, 'day', 'UTC')).toBe('2025-03-09T04:00:00.000Z');
  });

  it('moves back weeks and clamps months to the last day', () => {
    expect(back('2025-04-06T14:00:00Z', 2, 'week', 'Australia/Sydney')).toBe('2025-03-23T13:00:00.000Z');
    expect(back('2025-03-31T12:00:00Z', 1, 'month', 'UTC')).toBe('2025-02-28T12:00:00.000Z');
    expect(back('2024-03-31T12:00:00Z', 1, 'month', 'UTC')).toBe('2024-02-29T12:00:00.000Z');
    expect(back('2025-01-15T00:00:00Z', 13, 'month', 'Asia/Kolkata')).toBe('2023-12-15T00:00:00.000Z');
  });

  it('resolves a wall time that a DST gap skips to the hour before', () => {
    // 02:30 on 9 March does not exist in New York; the window starts at 01:30 EST instead.
    expect(back('2025-03-10T06:30:00Z', 1, 'day', 'America/New_York')).toBe('2025-03-09T06:30:00.000Z');
  });

  it('keeps milliseconds and stops at EARLIEST for absurd periods', () => {
    expect(back('2025-01-02T00:00:00.250Z', 1, 'day', 'Europe/London')).toBe('2025-01-01T00:00:00.250Z');
    expect(periodBack(new Date('2025-01-01T00:00:00Z'), 100_000, 'month', 'UTC')).toEqual(EARLIEST);
  });
});
