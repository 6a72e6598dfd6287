import { describe, expect, it } from 'vitest';
import { parseTimestamp, wallTimeToInstant } from './timestamps.js';

const iso = (value: unknown, tz = 'UTC') => {
  const r = parseTimestamp(value, tz);
  return r?.ok ? new Date(r.ms).toISOString() : r?.reason;
};

describe('parseTimestamp', () => {
  it('reads ISO 8601 with Z or an offset as the instant it names', () => {
    expect(iso('2024-03-01T10:00:00Z')).toBe('2024-03-01T10:00:00.000Z');
    expect(iso('2024-03-01T10:00:00.5+02:00')).toBe('2024-03-01T08:00:00.500Z');
    expect(iso('2024-03-01 10:00-0530')).toBe('2024-03-01T15:30:00.000Z');
    expect(iso('2024-03-01T10:00:00.123456789Z')).toBe('2024-03-01T10:00:00.123Z');
  });

  it('tells epoch seconds from milliseconds by magnitude, as numbers or text', () => {
    expect(iso(1711076863.755467)).toBe('2024-03-22T03:07:43.755Z');
    expect(iso('1711076863755')).toBe('2024-03-22T03:07:43.755Z');
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(iso(1e16)).toMatch(/too large/);
  });

  it('reads naive times in --tz, across DST changes', () => {
    expect(iso('2024-07-01 12:00:00', 'Europe/Paris')).toBe('2024-07-01T10:00:00.000Z');
    expect(iso('2024-01-01T12:00', 'Europe/Paris')).toBe('2024-01-01T11:00:00.000Z');
    expect(iso('2024-03-01', 'America/New_York')).toBe('2024-03-01T05:00:00.000Z');
    // 02:30 does not exist on 2024-03-10 in New York: it moves forward to 03:30 EDT.
    expect(iso('2024-03-10T02:30:00', 'America/New_York')).toBe('2024-03-10T07:30:00.000Z');
    // 01:30 happens twice on 2024-11-03: the first (EDT) is taken.
    expect(iso('2024-11-03T01:30:00', 'America/New_York')).toBe('2024-11-03T05:30:00.000Z');
  });

  it('says why a value is not a timestamp, and treats empty as none', () => {
    expect(iso('yesterday')).toMatch(/not ISO 8601/);
    expect(iso('2024-02-30T00:00:00Z')).toMatch(/not a valid date/);
    expect(iso('2024-01-01T24:00:00Z')).toMatch(/not a valid date/);
    expect(iso(true)).toMatch(/string or number/);
    expect(parseTimestamp('', 'UTC')).toBeUndefined();
    expect(parseTimestamp(undefined, 'UTC')).toBeUndefined();
  });

  it('round-trips wall times through zones that are not whole hours', () => {
    const wall = Date.UTC(2024, 5, 1, 9, 0);
    expect(new Date(wallTimeToInstant(wall, 'Asia/Kolkata')).toISOString()).toBe('2024-06-01T03:30:00.000Z');
    expect(new Date(wallTimeToInstant(wall, 'Asia/Kathmandu')).toISOString()).toBe(
      '2024-06-01T03:15:00.000Z',
    );
  });
});
