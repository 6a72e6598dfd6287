import { describe, expect, it } from 'vitest';
import { instantSchema, STORED_TIME_MESSAGE, timestampSchema } from './primitives.js';

const messages = (value: string) => timestampSchema.safeParse(value).error?.issues.map((i) => i.message);

describe('timestampSchema', () => {
  it('takes the stored years 1900 through 2199 (UTC), both ends included', () => {
    for (const t of ['1900-01-01T00:00:00Z', '2199-12-31T23:59:59.999Z', '1900-01-01T01:00:00+01:00']) {
      expect(messages(t)).toBeUndefined();
    }
  });

  // Epoch µs of these are not safe integers (or are data errors): the store's append threw, a 500.
  it.each([
    '0000-01-01T00:00:00Z',
    '1500-06-01T00:00:00Z',
    '1899-12-31T23:59:59.999Z',
    '1900-01-01T00:30:00+01:00',
    '2199-12-31T23:00:00-05:00',
    '2200-01-01T00:00:00Z',
    '2262-04-12T00:00:00Z',
    '3000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
  ])('refuses %s, saying which years are kept', (t) => {
    expect(messages(t)).toEqual([STORED_TIME_MESSAGE]);
  });

  it('reports a malformed time once, with the syntax message alone', () => {
    expect(messages('3000-01-01')).toEqual(['must be an ISO 8601 time with Z or an offset']);
  });

  it('leaves bounds (instantSchema) unlimited: they are compared, never stored', () => {
    expect(instantSchema.safeParse('0001-01-01T00:00:00Z').success).toBe(true);
    expect(instantSchema.safeParse('9999-12-31T23:59:59Z').success).toBe(true);
  });
});
