import { describe, expect, it } from 'vitest';
import { sliceTables } from './chart-slices.js';

const slices = [
  { label: 'billing', value: 2, percent: 50 },
  { label: 'refund', value: 2, percent: 50 },
];

describe('sliceTables footer', () => {
  // Found by probing: a conversation that showed two intents made "Total: 4 conversations" of 3.
  it('says an intent total counts a conversation once per intent; a sentiment total is conversations', () => {
    const intents = sliceTables({ chart_name: 'intents', slices }, 'Intent', undefined, false);
    expect(intents).toContain('Total: 4 (a conversation counts once for each intent it showed)');
    expect(intents).not.toContain('4 conversations');
    const sentiment = sliceTables({ chart_name: 'sentiment', slices }, 'Sentiment', undefined, false);
    expect(sentiment).toContain('Total: 4 conversations');
  });
});
