import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { repriceBody } from './reprice.js';

describe('cas reprice --from / --to', () => {
  it('takes days (the --to day whole) and ISO times with a zone', () => {
    expect(repriceBody({ from: '2025-02-28', to: '2025-02-28' })).toEqual({
      from: '2025-02-28T00:00:00.000Z',
      to: '2025-03-01T00:00:00.000Z',
    });
    expect(repriceBody({ from: '2025-03-01T10:00:00+02:00' })).toEqual({ from: '2025-03-01T08:00:00.000Z' });
  });

  it('refuses a day the calendar does not have, naming the flag (Date.parse rolled 02-30 into March)', () => {
    for (const [flag, value] of [
      ['--from', '2025-02-30'],
      ['--to', '2025-02-29'],
      ['--from', '2025-04-31'],
      ['--to', '2025-13-01'],
    ] as const) {
      const options = flag === '--from' ? { from: value } : { to: value };
      expect(() => repriceBody(options)).toThrow(UsageError);
      expect(() => repriceBody(options)).toThrow(`${flag} ${value}: not a calendar day`);
    }
    expect(() => repriceBody({ from: '2025-02-30T00:00:00Z' })).toThrow(/--from 2025-02-30T00:00:00Z/);
    expect(() => repriceBody({ from: '1740823200' })).toThrow(/--from 1740823200: give YYYY-MM-DD/);
  });

  it('reads a time without an offset as UTC, as its days are', () => {
    expect(repriceBody({ from: '2025-03-01T10:00', to: '20250302T0000' })).toEqual({
      from: '2025-03-01T10:00:00.000Z',
      to: '2025-03-02T00:00:00.000Z',
    });
  });
});
