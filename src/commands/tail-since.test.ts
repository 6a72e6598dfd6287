import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { parseSince } from './tail.js';

const now = Date.parse('2025-03-09T12:00:00Z');

describe('--since', () => {
  it('reads a duration or an ISO time as milliseconds back from now', () => {
    expect(parseSince('90s', now)).toBe(90_000);
    expect(parseSince('2h', now)).toBe(7_200_000);
    expect(parseSince('2025-03-09T11:00:00Z', now)).toBe(3_600_000);
    expect(() => parseSince('soon', now)).toThrow(UsageError);
  });

  // 99999999999d was a RangeError, "this is a bug" (found by probing): no event is dated before 1900.
  it('reaches back no further than 1900, the earliest time an event may carry', () => {
    const toEarliest = now - Date.parse('1900-01-01T00:00:00Z');
    expect(parseSince('99999999999d', now)).toBe(toEarliest);
    expect(parseSince('1000000d', now)).toBe(toEarliest);
    expect(parseSince('36500d', now)).toBe(36_500 * 86_400_000);
  });
});
