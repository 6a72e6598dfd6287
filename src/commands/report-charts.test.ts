import { describe, expect, it } from 'vitest';
import {
  chartArgv,
  defaultPlans,
  describeFilters,
  pickTrait,
  shellLine,
  withShared,
} from './report-charts.js';

const none = { range: {}, userWhere: [], sequence: [] };

describe('the report plan', () => {
  it('has the issue-20 charts by default', () => {
    expect(defaultPlans('plan').map((p) => p.argv[0])).toEqual([
      'segmentation',
      'sessions',
      'retention',
      'users',
      'funnel',
      'intents',
      'sentiment',
      'conversations',
      'segmentation',
    ]);
    // The cost of turns and of usage events (decisions §5), one series each.
    const cost = defaultPlans('plan').at(-1)?.argv ?? [];
    expect(cost.filter((w) => w === 'sum:cost')).toHaveLength(2);
    expect(cost).toContain('Conversation Usage');
  });

  it("adds the report's range where a chart sets none, and its filters always", () => {
    const shared = {
      range: { from: '2025-01-06', to: '2025-02-02', period: 'week', tz: 'UTC' },
      userWhere: ['plan = pro'],
      cohort: 'Big',
      sequence: [
        { flag: 'performed', value: 'Purchase' },
        { flag: 'where', value: 'amount > 3' },
      ],
    };
    expect(withShared(['sessions'], shared)).toEqual([
      'sessions',
      '--from',
      '2025-01-06',
      '--to',
      '2025-02-02',
      '--period',
      'week',
      '--tz',
      'UTC',
      '--user-where',
      'plan = pro',
      '--cohort',
      'Big',
      '--performed',
      'Purchase',
      '--where',
      'amount > 3',
    ]);
    const own = withShared(['sessions', '--last', '7d', '--period', 'day', '--cohort', 'Mine'], shared);
    expect(own).not.toContain('2025-01-06');
    expect(own.filter((w) => w === '--period')).toHaveLength(1);
    expect(own.filter((w) => w === '--cohort')).toHaveLength(1);
    expect(own).toContain('UTC');
    // A spec ending in a flag keeps it last, so its missing value is what is said.
    const dangling = withShared(['segmentation', '--event'], shared);
    expect(dangling.at(-1)).toBe('--event');
    expect(dangling.slice(0, -1)).toEqual(withShared(['segmentation'], shared));
  });

  it('describes filters as typed and quotes words for a shell', () => {
    expect(describeFilters(none)).toBe('none');
    expect(describeFilters({ ...none, userWhere: ["name = 'O'Brien'"] })).toBe(
      `--user-where 'name = '\\''O'\\''Brien'\\'''`,
    );
    expect(shellLine(['chart', 'users', '--trait', 'a b', 'x=1'])).toBe(`chart users --trait 'a b' x=1`);
  });

  it('picks plan, else the first trait; rebuilds cas chart words from flags', () => {
    expect(pickTrait(['country', 'plan'])).toBe('plan');
    expect(pickTrait(['country'])).toBe('country');
    expect(pickTrait([])).toBeUndefined();
    expect(
      chartArgv('funnel', {
        last: '7d',
        sequence: [{ flag: 'event', value: 'A' }],
        window: '1d',
        trait: 'plan',
      }),
    ).toEqual(['funnel', '--last', '7d', '--event', 'A', '--trait', 'plan', '--window', '1d']);
  });
});
