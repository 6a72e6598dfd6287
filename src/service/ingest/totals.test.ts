import { describe, expect, it } from 'vitest';
import { newConversation } from './state.js';
import { accumulate, costOf, isFunctionError, labelOf } from './totals.js';

describe('costOf', () => {
  it('takes a direct cost, else prices model and tokens, else has none', () => {
    expect(costOf({ cost: 0.25, model: 'gpt-4o', prompt_tokens: 1, completion_tokens: 1 })).toEqual({
      cost: 0.25,
      known: true,
    });
    expect(costOf({ model: 'gpt-4o-mini', prompt_tokens: 2000, completion_tokens: 1000 })).toEqual({
      cost: 0.0009,
      known: true,
    });
    expect(costOf({ model: 'mystery', prompt_tokens: 10, completion_tokens: 10 })).toEqual({
      cost: 0,
      known: false,
    });
    expect(costOf({ model: 'gpt-4o' })).toBeUndefined();
    expect(costOf({})).toBeUndefined();
  });

  it('marks tokens without a model as an unknown cost, never a known $0 (found by probing)', () => {
    expect(costOf({ prompt_tokens: 10, completion_tokens: 10 })).toEqual({ cost: 0, known: false });
    const c = newConversation('c', 's', 0);
    accumulate(c, 'turn', { user: 'a', assistant: 'b', prompt_tokens: 100, completion_tokens: 100 }, 0);
    expect(c.totals).toMatchObject({ cost: 0, costKnown: false, promptTokens: 100 });
  });

  it('prices the one count a call gives and marks the cost unknown (it was no cost, and a summary of $0 known)', () => {
    const completionOnly = costOf({ model: 'gpt-4o-mini', completion_tokens: 1000 });
    expect(completionOnly).toEqual({ cost: 0.0006, known: false });
    expect(costOf({ model: 'gpt-4o-mini', prompt_tokens: 2000 })).toEqual({ cost: 0.0003, known: false });
    const c = newConversation('c', 's', 0);
    accumulate(c, 'turn', { model: 'gpt-4o-mini', completion_tokens: 1000 }, 0);
    expect(c.totals).toMatchObject({ cost: 0.0006, costKnown: false, completionTokens: 1000 });
  });

  it('keeps a stored unknown price unknown when history is replayed', () => {
    expect(costOf({ cost: 0, cost_known: false, model: 'mystery' })).toEqual({ cost: 0, known: false });
  });
});

describe('function errors and intent labels', () => {
  it('counts an error property or success: false as a failed call', () => {
    expect(isFunctionError({ name: 'f', error: 'timeout' })).toBe(true);
    expect(isFunctionError({ name: 'f', success: false })).toBe(true);
    expect(isFunctionError({ name: 'f', success: true, error: '' })).toBe(false);
    expect(isFunctionError({ name: 'f' })).toBe(false);
  });

  it('reads a label and its intent_* attributes', () => {
    expect(labelOf({ intent: ' refund ', intent_category: 'billing', category: 'other' })).toEqual({
      name: 'refund',
      attributes: { category: 'billing' },
    });
    expect(labelOf({ intent: '' })).toBeUndefined();
    expect(labelOf({ user: 'x' })).toBeUndefined();
  });
});

describe('accumulate', () => {
  it('sums turns, tokens, costs and function calls, remembering utterances and first labels', () => {
    const c = newConversation('c', 's', 0);
    accumulate(
      c,
      'turn',
      {
        user: 'a',
        assistant: 'b',
        model: 'gpt-4o',
        prompt_tokens: 1000,
        completion_tokens: 500,
        intent: 'x',
      },
      1,
    );
    accumulate(c, 'turn', { user: 'c', assistant: 'd', cost: 0.1, intent: 'x', intent_tier: 'gold' }, 2);
    accumulate(c, 'usage', { model: 'claude-3-haiku', prompt_tokens: 4000, completion_tokens: 0 }, 3);
    accumulate(c, 'usage', { model: 'unknown-model', prompt_tokens: 1, completion_tokens: 1 }, 4);
    accumulate(c, 'function', { name: 'f', error: 'boom' }, 5);
    accumulate(c, 'function', { name: 'g' }, 6);
    expect(c.totals).toEqual({
      turns: 2,
      cost: 0.1085,
      costKnown: false,
      promptTokens: 5001,
      completionTokens: 501,
      functionCalls: 2,
      functionErrors: 1,
    });
    expect(c.utterances).toEqual([
      { text: 'a', ts: 1 },
      { text: 'c', ts: 2 },
    ]);
    expect([...c.labels]).toEqual([['x', {}]]);
  });
});
