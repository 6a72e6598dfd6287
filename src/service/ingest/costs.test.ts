import { describe, expect, it } from 'vitest';
import { priceOf, roundCost, tokenCost } from './costs.js';
import { MODEL_ALIASES, MODEL_PRICES } from './prices.js';

describe('price table', () => {
  it('has positive input and output prices for every entry, and aliases that resolve', () => {
    for (const [model, [input, output]] of MODEL_PRICES) {
      expect(input, model).toBeGreaterThan(0);
      expect(output, model).toBeGreaterThanOrEqual(input);
    }
    for (const [alias, target] of MODEL_ALIASES) expect(MODEL_PRICES.has(target), alias).toBe(true);
  });

  it('covers the well-known families of each provider', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-4-0613',
      'gpt-3.5-turbo',
      'o1',
      'o3-mini',
    ]) {
      expect(priceOf(model)?.model).toBe(model);
    }
    for (const model of [
      'claude-3-5-sonnet',
      'claude-3-haiku',
      'claude-sonnet-4',
      'gemini-1.5-pro',
      'gemini-2.5-flash',
    ]) {
      expect(priceOf(model)).toBeDefined();
    }
  });
});

describe('priceOf', () => {
  it('finds the family of dated snapshots, provider paths and other spellings', () => {
    expect(priceOf('gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(priceOf('GPT-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(priceOf('openai/gpt-4.1')?.model).toBe('gpt-4.1');
    expect(priceOf('claude-3-5-sonnet-20241022')?.model).toBe('claude-3-5-sonnet');
    expect(priceOf('anthropic/claude-3.5-sonnet')?.model).toBe('claude-3-5-sonnet');
    expect(priceOf('anthropic.claude-3-haiku-20240307-v1:0')?.model).toBe('claude-3-haiku');
    expect(priceOf('claude-3-5-sonnet@20240620')?.model).toBe('claude-3-5-sonnet');
    expect(priceOf('models/gemini-1.5-pro-002')?.model).toBe('gemini-1.5-pro');
    expect(priceOf('gemini-2.5-flash-preview-05-20')?.model).toBe('gemini-2.5-flash');
  });

  it('prefers an exact snapshot entry over its family and never confuses mini with its parent', () => {
    expect(priceOf('gpt-4o-2024-05-13')).toMatchObject({ inputPerMillion: 5, outputPerMillion: 15 });
    expect(priceOf('gpt-4o')).toMatchObject({ inputPerMillion: 2.5, outputPerMillion: 10 });
    expect(priceOf('o1-mini-2024-09-12')?.model).toBe('o1-mini');
    expect(priceOf('gemini-2.0-flash-lite')?.model).toBe('gemini-2.0-flash-lite');
  });

  it('knows nothing of made-up or local models', () => {
    expect(priceOf('my-finetune')).toBeUndefined();
    expect(priceOf('llama3:8b')).toBeUndefined();
    expect(priceOf('')).toBeUndefined();
  });
});

describe('tokenCost', () => {
  it('prices tokens per million: 1,000 prompt + 500 completion tokens of gpt-4o cost $0.0075', () => {
    expect(tokenCost('gpt-4o', 1000, 500)).toEqual({ cost: 0.0075, known: true });
    expect(tokenCost('gpt-4-0613', 1_000_000, 1_000_000)).toEqual({ cost: 90, known: true });
  });

  it('gives an unknown model cost 0, marked unknown', () => {
    expect(tokenCost('mystery-1', 1000, 1000)).toEqual({ cost: 0, known: false });
  });

  it('rounds away float drift in sums', () => {
    expect(roundCost(0.1 + 0.2)).toBe(0.3);
  });
});
