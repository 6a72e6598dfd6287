/**
 * List prices of well-known models in USD per million tokens: [input (prompt), output (completion)].
 *
 * As of 2026-06, standard tier, text, base context tier (long-context surcharges, cached input and
 * batch discounts are not modelled: usage events carry no such detail). Sources:
 * - OpenAI: https://platform.openai.com/docs/pricing (legacy models: https://openai.com/api/pricing)
 * - Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing
 * - Google: https://ai.google.dev/gemini-api/docs/pricing
 * - Mistral: https://mistral.ai/pricing
 * A price change is a code change: add the new figure and update the date above, so re-priced history
 * stays explainable. Names are matched after normalization (see costs.ts), so dated snapshots such as
 * `gpt-4o-2024-08-06` or `claude-3-5-sonnet-20241022` find their family here.
 */
export const PRICES_AS_OF = '2026-06-01';

export const MODEL_PRICES: ReadonlyMap<string, readonly [number, number]> = new Map([
  // OpenAI
  ['gpt-5', [1.25, 10]],
  ['gpt-5-mini', [0.25, 2]],
  ['gpt-5-nano', [0.05, 0.4]],
  ['gpt-4.1', [2, 8]],
  ['gpt-4.1-mini', [0.4, 1.6]],
  ['gpt-4.1-nano', [0.1, 0.4]],
  ['gpt-4.5-preview', [75, 150]],
  ['gpt-4o', [2.5, 10]],
  // The first gpt-4o snapshot kept its launch price after the family got cheaper.
  ['gpt-4o-2024-05-13', [5, 15]],
  ['gpt-4o-mini', [0.15, 0.6]],
  ['chatgpt-4o-latest', [5, 15]],
  ['gpt-4-turbo', [10, 30]],
  ['gpt-4-turbo-preview', [10, 30]],
  ['gpt-4-1106-preview', [10, 30]],
  ['gpt-4-0125-preview', [10, 30]],
  ['gpt-4', [30, 60]],
  ['gpt-4-0613', [30, 60]],
  ['gpt-4-0314', [30, 60]],
  ['gpt-4-32k', [60, 120]],
  ['gpt-3.5-turbo', [0.5, 1.5]],
  ['gpt-3.5-turbo-0125', [0.5, 1.5]],
  ['gpt-3.5-turbo-1106', [1, 2]],
  ['gpt-3.5-turbo-0613', [1.5, 2]],
  ['gpt-3.5-turbo-16k', [3, 4]],
  ['gpt-3.5-turbo-instruct', [1.5, 2]],
  ['o1', [15, 60]],
  ['o1-preview', [15, 60]],
  ['o1-mini', [1.1, 4.4]],
  ['o1-pro', [150, 600]],
  ['o3', [2, 8]],
  ['o3-mini', [1.1, 4.4]],
  ['o3-pro', [20, 80]],
  ['o4-mini', [1.1, 4.4]],
  // Anthropic
  ['claude-opus-4-5', [5, 25]],
  ['claude-opus-4-1', [15, 75]],
  ['claude-opus-4', [15, 75]],
  ['claude-sonnet-4-5', [3, 15]],
  ['claude-sonnet-4', [3, 15]],
  ['claude-haiku-4-5', [1, 5]],
  ['claude-3-7-sonnet', [3, 15]],
  ['claude-3-5-sonnet', [3, 15]],
  ['claude-3-5-haiku', [0.8, 4]],
  ['claude-3-opus', [15, 75]],
  ['claude-3-sonnet', [3, 15]],
  ['claude-3-haiku', [0.25, 1.25]],
  ['claude-2.1', [8, 24]],
  ['claude-2.0', [8, 24]],
  ['claude-instant-1.2', [0.8, 2.4]],
  // Google
  ['gemini-2.5-pro', [1.25, 10]],
  ['gemini-2.5-flash', [0.3, 2.5]],
  ['gemini-2.5-flash-lite', [0.1, 0.4]],
  ['gemini-2.0-flash', [0.1, 0.4]],
  ['gemini-2.0-flash-lite', [0.075, 0.3]],
  ['gemini-1.5-pro', [1.25, 5]],
  ['gemini-1.5-flash', [0.075, 0.3]],
  ['gemini-1.5-flash-8b', [0.0375, 0.15]],
  ['gemini-1.0-pro', [0.5, 1.5]],
  // Mistral
  ['mistral-large', [2, 6]],
  ['mistral-medium', [0.4, 2]],
  ['mistral-small', [0.1, 0.3]],
  ['codestral', [0.3, 0.9]],
  ['open-mistral-nemo', [0.15, 0.15]],
]);

/** Other spellings of the same families (OpenRouter-style dots, marketing names, bare aliases). */
export const MODEL_ALIASES: ReadonlyMap<string, string> = new Map([
  ['claude-3.5-sonnet', 'claude-3-5-sonnet'],
  ['claude-3.5-haiku', 'claude-3-5-haiku'],
  ['claude-3.7-sonnet', 'claude-3-7-sonnet'],
  ['claude-sonnet-4.5', 'claude-sonnet-4-5'],
  ['claude-opus-4.1', 'claude-opus-4-1'],
  ['claude-opus-4.5', 'claude-opus-4-5'],
  ['claude-haiku-4.5', 'claude-haiku-4-5'],
  ['claude-4-sonnet', 'claude-sonnet-4'],
  ['claude-4-opus', 'claude-opus-4'],
  ['gpt-4o-latest', 'chatgpt-4o-latest'],
  ['gpt-35-turbo', 'gpt-3.5-turbo'],
  ['gemini-pro', 'gemini-1.0-pro'],
]);
