import { describe, expect, it } from 'vitest';
import type { BuiltControls } from './chart-flags.js';
import { planReport } from './report.js';

const parse = (argv: readonly string[]) => ({ argv }) as unknown as BuiltControls;

describe('planReport: --intent and the sentiment chart', () => {
  // Found by probing: several --intent (a filter of every other chart) failed the whole report, as
  // the sentiment chart's --intent is the one intent whose conversations it splits.
  it('draws one sentiment chart per --intent, each with its --where; the others take them all', () => {
    const sequence = [
      { flag: 'performed', value: 'Purchase' },
      { flag: 'where', value: 'amount > 3' },
      { flag: 'intent', value: 'refund' },
      { flag: 'where', value: 'order_id ~ ^A' },
      { flag: 'intent', value: 'billing' },
    ];
    const planned = planReport({
      specs: [],
      trait: 'plan',
      shared: { range: {}, userWhere: [], sequence },
      parse,
    });
    const sentiment = planned.filter((p) => p.argv[0] === 'sentiment');
    expect(sentiment.map((p) => p.plan.title)).toEqual(['Sentiment: refund', 'Sentiment: billing']);
    expect(sentiment[0]?.argv).toEqual([
      'sentiment',
      '--performed',
      'Purchase',
      '--where',
      'amount > 3',
      '--intent',
      'refund',
      '--where',
      'order_id ~ ^A',
    ]);
    expect(sentiment[1]?.argv.slice(-2)).toEqual(['--intent', 'billing']);
    const intents = planned.find((p) => p.argv[0] === 'intents');
    expect(intents?.argv.filter((w) => w === '--intent')).toHaveLength(2);
  });

  it('keeps one sentiment chart for one --intent, and a --chart that names its own', () => {
    const one = [{ flag: 'intent', value: 'refund' }];
    const planned = planReport({
      specs: [],
      trait: 'plan',
      shared: { range: {}, userWhere: [], sequence: one },
      parse,
    });
    expect(planned.filter((p) => p.argv[0] === 'sentiment')).toHaveLength(1);
    const two = [...one, { flag: 'intent', value: 'billing' }];
    const own = planReport({
      specs: [['sentiment', '--intent', 'shipping']],
      shared: { range: {}, userWhere: [], sequence: two },
      parse,
    });
    expect(own).toHaveLength(1);
  });
});
