import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.js';
import { rangesFromQuery } from './query.js';

describe('rangesFromQuery', () => {
  it('reads the JSON form and the bracket form alike', () => {
    const ranges = [{ start: '2025-01-01T00:00:00Z', end: '2025-01-02T00:00:00Z' }];
    expect(rangesFromQuery({ ranges: JSON.stringify(ranges) })).toEqual(ranges);
    expect(
      rangesFromQuery({ 'ranges[0][start]': ranges[0]!.start, 'ranges[0][end]': ranges[0]!.end }),
    ).toEqual(ranges);
  });

  it('refuses a sparse index at once, naming it, instead of building a huge array', () => {
    expect(() => rangesFromQuery({ 'ranges[99999][start]': 'x' })).toThrow(ServiceError);
    expect(() => rangesFromQuery({ 'ranges[0][start]': 'a', 'ranges[5][end]': 'b' })).toThrow(/ranges\[5\]/);
  });
});
