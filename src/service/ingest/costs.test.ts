import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { roundCost, tokenCost } from './costs.js';
import {
  MODEL_ALIASES,
  PRICES_AS_OF,
  type PriceEntry,
  PriceFileError,
  PriceTable,
  parsePriceEntries,
  readPriceFile,
} from './price-table.js';
import TABLE from './prices/model-prices.json' with { type: 'json' };

const table = PriceTable.builtIn();
/** A model's rates as the JSON file states them: the expected figures below are computed from these. */
const rates = (model: string): PriceEntry => {
  const entry = table.entries.get(model);
  if (!entry) throw new Error(`${model} is not in the table`);
  return entry;
};
const r = (model: string, field: string): number => {
  const value = rates(model)[field];
  if (typeof value !== 'number') throw new Error(`${model} has no ${field}`);
  return value;
};
const cost = (model: string, usage: Parameters<typeof tokenCost>[1]) => tokenCost(model, usage, table);

describe('price table (prices/model-prices.json)', () => {
  it('is dated, cites a source for every provider it prices, and prices input and output of every entry', () => {
    expect(PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const sources = TABLE.cas_price_table.sources as Record<string, string>;
    for (const [model, entry] of table.entries) {
      expect(entry.input_cost_per_token, model).toBeGreaterThan(0);
      expect(entry.output_cost_per_token, model).toBeGreaterThanOrEqual(
        entry.mode === 'embedding' ? 0 : entry.input_cost_per_token!,
      );
      expect(sources[String(entry.litellm_provider).replace('text-completion-', '')], model).toMatch(
        /^https:\/\//,
      );
      if (entry.input_cost_per_token_batches !== undefined) {
        expect(entry.input_cost_per_token_batches, model).toBe(entry.input_cost_per_token! / 2);
      }
    }
    for (const [alias, target] of MODEL_ALIASES) expect(table.entries.has(target), alias).toBe(true);
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
      expect(table.resolve(model)?.model).toBe(model);
    }
    for (const model of [
      'claude-3-5-sonnet',
      'claude-3-haiku',
      'claude-sonnet-4',
      'gemini-1.5-pro',
      'gemini-2.5-flash',
    ]) {
      expect(table.resolve(model)).toBeDefined();
    }
  });
});

describe('model names: exact, then normalised', () => {
  it('finds the family of dated snapshots, provider paths, Bedrock ids and other spellings', () => {
    expect(table.resolve('gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(table.resolve('GPT-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(table.resolve('openai/gpt-4.1')?.model).toBe('gpt-4.1');
    expect(table.resolve('claude-3-5-sonnet-20241022')?.model).toBe('claude-3-5-sonnet');
    expect(table.resolve('anthropic/claude-3.5-sonnet')?.model).toBe('claude-3-5-sonnet');
    expect(table.resolve('anthropic.claude-3-haiku-20240307-v1:0')?.model).toBe('claude-3-haiku');
    expect(table.resolve('bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0')?.model).toBe(
      'claude-sonnet-4',
    );
    expect(table.resolve('claude-3-5-sonnet@20240620')?.model).toBe('claude-3-5-sonnet');
    expect(table.resolve('models/gemini-1.5-pro-002')?.model).toBe('gemini-1.5-pro');
    expect(table.resolve('gemini-2.5-flash-preview-05-20')?.model).toBe('gemini-2.5-flash');
  });

  it('prefers an exact snapshot entry over its family and never confuses mini with its parent', () => {
    expect(table.resolve('gpt-4o-2024-05-13')?.entry.input_cost_per_token).toBe(5e-6);
    expect(table.resolve('gpt-4o')?.entry.input_cost_per_token).toBe(2.5e-6);
    expect(table.resolve('o1-mini-2024-09-12')?.model).toBe('o1-mini');
    expect(table.resolve('gemini-2.0-flash-lite')?.model).toBe('gemini-2.0-flash-lite');
  });

  it('knows nothing of made-up or local models: cost 0, marked unknown', () => {
    expect(table.resolve('my-finetune')).toBeUndefined();
    expect(table.resolve('llama3:8b')).toBeUndefined();
    expect(table.resolve('')).toBeUndefined();
    expect(cost('mystery-1', { prompt: 1000, completion: 1000 })).toEqual({ cost: 0, known: false });
  });
});

describe('exact costs, each computed here from the table rates', () => {
  it('prompt and completion only: 1,000 + 500 tokens of gpt-4o', () => {
    expect(cost('gpt-4o', { prompt: 1000, completion: 500 })).toEqual({ cost: 0.0075, known: true });
    const expected = 1000 * r('gpt-4o', 'input_cost_per_token') + 500 * r('gpt-4o', 'output_cost_per_token');
    expect(cost('gpt-4o-2024-08-06', { prompt: 1000, completion: 500 }).cost).toBe(roundCost(expected));
  });

  it('a gpt-4o call with cached tokens: the cached part of the prompt at the cache-read rate', () => {
    const got = cost('gpt-4o-2024-11-20', { prompt: 10_000, cachedRead: 6_144, completion: 700 });
    const expected =
      (10_000 - 6_144) * r('gpt-4o', 'input_cost_per_token') +
      6_144 * r('gpt-4o', 'cache_read_input_token_cost') +
      700 * r('gpt-4o', 'output_cost_per_token');
    expect(got).toEqual({ cost: roundCost(expected), known: true });
    expect(got.cost).toBeLessThan(cost('gpt-4o', { prompt: 10_000, completion: 700 }).cost);
  });

  it('an o-series call with reasoning tokens: part of completion, at the reasoning rate where the table has one', () => {
    const usage = { prompt: 2_000, completion: 5_000, reasoning: 4_200 };
    const asOutput =
      2_000 * r('o3-mini', 'input_cost_per_token') +
      (5_000 - 4_200) * r('o3-mini', 'output_cost_per_token') +
      4_200 * r('o3-mini', 'output_cost_per_token');
    expect(cost('o3-mini-2025-01-31', usage)).toEqual({ cost: roundCost(asOutput), known: true });
    // A table with its own reasoning rate (an override) prices the reasoning part with it.
    const withRate = table.mergedWith(new Map([['o3-mini', { output_cost_per_reasoning_token: 8.8e-6 }]]));
    const priced =
      2_000 * r('o3-mini', 'input_cost_per_token') +
      (5_000 - 4_200) * r('o3-mini', 'output_cost_per_token') +
      4_200 * 8.8e-6;
    expect(tokenCost('o3-mini', usage, withRate).cost).toBe(roundCost(priced));
  });

  it('a Claude call with cache creation and reads: prompt_tokens counts both, each at its own rate', () => {
    // Anthropic's usage: input_tokens 120 (uncached), cache_creation_input_tokens 3,000, cache_read_input_tokens 20,000.
    const usage = { prompt: 120 + 3_000 + 20_000, cacheWrite: 3_000, cachedRead: 20_000, completion: 850 };
    const m = 'claude-3-5-sonnet';
    const expected =
      120 * r(m, 'input_cost_per_token') +
      3_000 * r(m, 'cache_creation_input_token_cost') +
      20_000 * r(m, 'cache_read_input_token_cost') +
      850 * r(m, 'output_cost_per_token');
    expect(cost('claude-3-5-sonnet-20241022', usage)).toEqual({ cost: roundCost(expected), known: true });
  });

  // Priced at the 5-minute rate: $0.03768 where Anthropic bills $0.06018 (found by probing).
  it('a Claude call writing the cache for an hour: those writes at twice the input rate, the rest as writes', () => {
    const m = 'claude-sonnet-4';
    const usage = { prompt: 10 + 12_000, cacheWrite: 12_000, cacheWriteHour: 10_000, completion: 10 };
    expect(r(m, 'cache_creation_input_token_cost_above_1hr')).toBe(2 * r(m, 'input_cost_per_token'));
    const expected =
      10 * r(m, 'input_cost_per_token') +
      2_000 * r(m, 'cache_creation_input_token_cost') +
      10_000 * r(m, 'cache_creation_input_token_cost_above_1hr') +
      10 * r(m, 'output_cost_per_token');
    expect(cost('claude-sonnet-4-20250514', usage)).toEqual({ cost: roundCost(expected), known: true });
    // A table without the hour's rate prices them as other writes.
    const without = tokenCost('gpt-4o', {
      prompt: 1_000,
      cacheWrite: 500,
      cacheWriteHour: 500,
      completion: 1,
    });
    expect(without.cost).toBe(tokenCost('gpt-4o', { prompt: 1_000, cacheWrite: 500, completion: 1 }).cost);
  });

  it('a call above 200k input tokens on a tiered model: every token at the tier rates; at 200k exactly, the base rates', () => {
    const m = 'claude-sonnet-4-5';
    const above = { prompt: 250_000, cachedRead: 50_000, completion: 2_000 };
    const expected =
      (250_000 - 50_000) * r(m, 'input_cost_per_token_above_200k_tokens') +
      50_000 * r(m, 'cache_read_input_token_cost_above_200k_tokens') +
      2_000 * r(m, 'output_cost_per_token_above_200k_tokens');
    expect(cost('claude-sonnet-4-5-20250929', above)).toEqual({ cost: roundCost(expected), known: true });
    const base = 200_000 * r(m, 'input_cost_per_token') + 2_000 * r(m, 'output_cost_per_token');
    expect(cost(m, { prompt: 200_000, completion: 2_000 }).cost).toBe(roundCost(base));
    const gemini =
      300_000 * r('gemini-2.5-pro', 'input_cost_per_token_above_200k_tokens') +
      1_000 * r('gemini-2.5-pro', 'output_cost_per_token_above_200k_tokens');
    expect(cost('gemini-2.5-pro', { prompt: 300_000, completion: 1_000 }).cost).toBe(roundCost(gemini));
  });

  it('a batch call at the batch rates where the table has them, else the standard rates', () => {
    const batch =
      4_000 * r('gpt-4o', 'input_cost_per_token_batches') +
      1_000 * r('gpt-4o', 'output_cost_per_token_batches');
    expect(cost('gpt-4o', { prompt: 4_000, completion: 1_000, batch: true }).cost).toBe(roundCost(batch));
    expect(batch).toBe(
      (4_000 * r('gpt-4o', 'input_cost_per_token') + 1_000 * r('gpt-4o', 'output_cost_per_token')) / 2,
    );
    const standard =
      100 * r('chatgpt-4o-latest', 'input_cost_per_token') +
      10 * r('chatgpt-4o-latest', 'output_cost_per_token');
    expect(cost('chatgpt-4o-latest', { prompt: 100, completion: 10, batch: true }).cost).toBe(
      roundCost(standard),
    );
  });

  it('rounds away float drift in sums', () => {
    expect(roundCost(0.1 + 0.2)).toBe(0.3);
  });
});

describe('--prices files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cas-prices-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("merge over the built-in table: LiteLLM's shape, new models and changed fields", () => {
    const file = join(dir, 'litellm.json');
    writeFileSync(
      file,
      JSON.stringify({
        sample_spec: { input_cost_per_token: 0, max_tokens: 'LEGACY parameter' },
        'my-finetune': {
          input_cost_per_token: 1e-6,
          output_cost_per_token: 2e-6,
          litellm_provider: 'openai',
          mode: 'chat',
        },
        'gpt-4o': { input_cost_per_token: 5e-6 },
        'dall-e-3': { output_cost_per_image: 0.04, mode: 'image_generation' },
      }),
    );
    const merged = table.mergedWith(readPriceFile(file));
    expect(tokenCost('my-finetune', { prompt: 1000, completion: 1000 }, merged)).toEqual({
      cost: 0.003,
      known: true,
    });
    // gpt-4o keeps its output and cache rates, with the new input rate.
    expect(tokenCost('gpt-4o', { prompt: 1000, completion: 100 }, merged).cost).toBe(
      roundCost(1000 * 5e-6 + 100 * r('gpt-4o', 'output_cost_per_token')),
    );
    expect(tokenCost('dall-e-3', { prompt: 1, completion: 1 }, merged).known).toBe(false);
    // A snapshot the table has no entry of, given one rate: the rest from its family (gpt-4o).
    const snapshot = table.mergedWith(new Map([['gpt-4o-2024-08-06', { input_cost_per_token: 1e-5 }]]));
    expect(tokenCost('gpt-4o-2024-08-06', { prompt: 1000, completion: 100 }, snapshot)).toEqual({
      cost: roundCost(1000 * 1e-5 + 100 * r('gpt-4o', 'output_cost_per_token')),
      known: true,
    });
    // The family itself keeps its own rates.
    expect(tokenCost('gpt-4o', { prompt: 1000, completion: 0 }, snapshot).cost).toBe(
      roundCost(1000 * r('gpt-4o', 'input_cost_per_token')),
    );
    expect(tokenCost('sample_spec', { prompt: 1, completion: 1 }, merged).known).toBe(false);
  });

  it('are refused with the file and the JSON path of the problem', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ 'gpt-4o': { input_cost_per_token: '2.5e-6' } }));
    expect(() => readPriceFile(bad)).toThrow(
      new PriceFileError(`${bad}: gpt-4o.input_cost_per_token: must be a number`),
    );
    writeFileSync(bad, JSON.stringify({ m: { input_cost_per_token_above_200k_tokens: -1 } }));
    expect(() => readPriceFile(bad)).toThrow(
      `${bad}: m.input_cost_per_token_above_200k_tokens: must be a number, 0 or more`,
    );
    writeFileSync(bad, '{"m": ');
    expect(() => readPriceFile(bad)).toThrow(`${bad}: not valid JSON`);
    writeFileSync(bad, '{\n  "m": {},\n}');
    expect(() => readPriceFile(bad)).toThrow(
      `${bad}: not valid JSON (line 3, column 1: Expected double-quoted property name)`,
    );
    expect(() => readPriceFile(join(dir, 'missing.json'))).toThrow('missing.json: no such file');
    expect(() => parsePriceEntries([], 'x.json')).toThrow('x.json: must be a JSON object');
  });
});
