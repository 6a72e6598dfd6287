import { describe, expect, it } from 'vitest';
import { UsageError } from '../commands/errors.js';
import { parseChartWords, splitWords } from './report-spec.js';

describe('--chart specs', () => {
  it('split like a shell: quotes and backslashes keep blanks', () => {
    expect(splitWords(`funnel --event "Conversation Started" --event 'A "b"' --where x\\ =\\ 1`)).toEqual([
      'funnel',
      '--event',
      'Conversation Started',
      '--event',
      'A "b"',
      '--where',
      'x = 1',
    ]);
    expect(splitWords(`users --trait ''`)).toEqual(['users', '--trait', '']);
    expect(() => splitWords('users --trait "plan')).toThrow(UsageError);
  });

  it("parse with cas chart's options, in command-line order", () => {
    const words = splitWords(
      `segmentation --event Purchase --where "amount > 3" --measure sum:amount --last 7d`,
    );
    expect(parseChartWords(words, '--chart x')).toMatchObject({
      chart: 'segmentation',
      flags: {
        last: '7d',
        sequence: [
          { flag: 'event', value: 'Purchase' },
          { flag: 'where', value: 'amount > 3' },
          { flag: 'measure', value: 'sum:amount' },
        ],
      },
    });
  });

  it('name the spec in a usage error (exit 2)', () => {
    expect(() => parseChartWords(['segmentation', '--fromm', '2025-01-01'], 'L')).toThrow(
      "L: unknown option '--fromm' (Did you mean --from?)",
    );
    expect(() => parseChartWords(['pie'], '--chart "pie"')).toThrow(/^--chart "pie": .*pie/);
    expect(() => parseChartWords(['users', '--colour', 'red'], '--chart "users"')).toThrow(
      /--chart "users": unknown option '--colour'/,
    );
    expect(() => parseChartWords(['users', '--trait', 'a', '--trait', 'b'], 'L')).toThrow(UsageError);
  });
});
