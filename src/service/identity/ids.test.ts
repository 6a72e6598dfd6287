import { describe, expect, it } from 'vitest';
import { newUlid, newUserId } from './ids.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('newUlid', () => {
  it('is 26 Crockford characters whose time part sorts by creation', () => {
    const a = newUlid(Date.parse('2025-01-01T00:00:00Z'));
    const b = newUlid(Date.parse('2025-01-01T00:00:00.001Z'));
    expect(a).toMatch(ULID);
    expect(a.slice(0, 10) < b.slice(0, 10)).toBe(true);
  });

  it('clamps a time before 1970 to 0 and keeps ids unique (a negative time made "undefined"s)', () => {
    const times = [-1, Date.parse('1950-06-01T00:00:00Z'), Date.parse('1900-01-01T00:00:00Z')];
    const ids = times.map((t) => newUlid(t));
    for (const id of ids) {
      expect(id).toMatch(ULID);
      expect(id.slice(0, 10)).toBe('0000000000');
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(newUserId(-86_400_000)).toMatch(/^u_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('clamps a time past 48 bits to the largest one', () => {
    expect(newUlid(2 ** 50).slice(0, 10)).toBe('7ZZZZZZZZZ');
    expect(newUlid(Date.parse('9999-12-31T23:59:59.999Z'))).toMatch(ULID);
  });
});
