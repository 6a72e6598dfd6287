import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatPath } from '../../shared/errors.js';
import { fileErrorReason } from '../../shared/file-errors.js';
import { parseJsonText } from '../../shared/json-syntax.js';
import BUILT_IN from './prices/model-prices.json' with { type: 'json' };

/**
 * The price table as data (issue 19): entries keyed by model name whose fields follow LiteLLM's
 * `model_prices_and_context_window.json` (USD per token). `prices/model-prices.json` is the built-in,
 * dated table; `cas serve --prices <file>` merges LiteLLM's own file or a local one over it.
 */
const rate = z.number({ error: 'must be a number' }).min(0, 'must be 0 or more');

/** Tiered fields: `<field>_above_<N>k_tokens`, the rate of a call whose input exceeds N thousand tokens. */
export const TIER_FIELD = /^(.+)_above_(\d+)k_tokens$/;

const RATE_FIELDS = [
  'input_cost_per_token',
  'output_cost_per_token',
  'cache_read_input_token_cost',
  'cache_creation_input_token_cost',
  // LiteLLM's name for Anthropic's cache writes that live an hour (2x the input rate; 5-minute ones 1.25x).
  'cache_creation_input_token_cost_above_1hr',
  'output_cost_per_reasoning_token',
  'input_cost_per_token_batches',
  'output_cost_per_token_batches',
] as const;
export type RateField = (typeof RATE_FIELDS)[number];

export const priceEntrySchema = z
  .looseObject({
    ...Object.fromEntries(RATE_FIELDS.map((f) => [f, rate.optional()])),
    litellm_provider: z.string().optional(),
    mode: z.string().optional(),
  })
  .superRefine((entry, ctx) => {
    for (const [key, value] of Object.entries(entry)) {
      const tier = TIER_FIELD.exec(key);
      if (!tier || !(RATE_FIELDS as readonly string[]).includes(tier[1] ?? '')) continue;
      if (typeof value !== 'number' || !(value >= 0)) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be a number, 0 or more' });
      }
    }
  });

export type PriceEntry = Partial<Record<RateField, number>> & Readonly<Record<string, unknown>>;

/** Keys of a price file that describe it rather than price a model. */
const NOT_MODELS = new Set(['sample_spec', 'cas_price_table']);

export class PriceFileError extends Error {
  override readonly name = 'PriceFileError';
}

/** Validates a parsed price file; an error names the file and the JSON path (`gpt-4o.input_cost_per_token`). */
export function parsePriceEntries(raw: unknown, source: string): Map<string, PriceEntry> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new PriceFileError(`${source}: must be a JSON object of model name → prices`);
  }
  const entries = new Map<string, PriceEntry>();
  for (const [model, value] of Object.entries(raw)) {
    if (NOT_MODELS.has(model)) continue;
    const parsed = priceEntrySchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = formatPath([model, ...(issue?.path ?? [])]);
      throw new PriceFileError(`${source}: ${path}: ${issue?.message ?? 'invalid'}`);
    }
    entries.set(model, parsed.data as PriceEntry);
  }
  return entries;
}

/** Reads and validates a `--prices` file. */
export function readPriceFile(path: string): Map<string, PriceEntry> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new PriceFileError(`${path}: ${fileErrorReason(error)}`);
  }
  const raw = parseJsonText(text, (why) => new PriceFileError(`${path}: not valid JSON (${why})`));
  return parsePriceEntries(raw, path);
}

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

// Snapshot and version suffixes that do not change a family's price: dates, numbered revisions,
// `-latest`, `-preview-05-20`, Bedrock's `-v1:0`, Vertex's `@20240620`.
const SUFFIX =
  /(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{3,4}|-latest|-preview(?:-\d{2}-\d{2})?|-exp(?:-\d{4})?|-v\d+(?::\d+)?|@\d{8}|:[\w.-]+)$/;
// Bedrock's cross-region inference profiles (`us.`) and vendor prefixes (`anthropic.`).
const VENDOR_PREFIX = /^(?:(?:us|eu|apac|global|jp|au)\.)?(?:anthropic|openai|google|mistral|meta)\./;

/** An entry a model name resolved to, under the table key it matched. */
export interface ResolvedPrice {
  model: string;
  entry: PriceEntry;
}

/** The AS-OF date of the built-in table. */
export const PRICES_AS_OF: string = BUILT_IN.cas_price_table.as_of;

export class PriceTable {
  private readonly resolved = new Map<string, ResolvedPrice | null>();

  constructor(readonly entries: ReadonlyMap<string, PriceEntry>) {}

  static builtIn(): PriceTable {
    return new PriceTable(parsePriceEntries(BUILT_IN, 'built-in model-prices.json'));
  }

  /**
   * This table with `overrides` merged over it: an entry's fields replace the same fields, others
   * stay. A model the table has no entry of takes the rest from the entry its name resolves to (a
   * dated snapshot from its family): given one rate only, it was an incomplete entry, skipped
   * without a word, and the family's rates priced the call (found by probing).
   */
  mergedWith(overrides: ReadonlyMap<string, PriceEntry>): PriceTable {
    const merged = new Map(this.entries);
    for (const [model, entry] of overrides)
      merged.set(model, { ...(merged.get(model) ?? this.resolve(model)?.entry), ...entry });
    return new PriceTable(merged);
  }

  private lookup(name: string): ResolvedPrice | undefined {
    for (const key of [name, MODEL_ALIASES.get(name)]) {
      if (key === undefined) continue;
      const entry = this.entries.get(key);
      if (entry?.input_cost_per_token !== undefined && entry.output_cost_per_token !== undefined) {
        return { model: key, entry };
      }
    }
    return undefined;
  }

  /**
   * The entry of a model as callers write it: the exact name first (LiteLLM's own keys such as
   * `bedrock/...` included), then lower-cased, then without a provider path (`openai/gpt-4o`,
   * `models/gemini-1.5-pro`) or Bedrock prefix (`us.anthropic.`), then with dated snapshot suffixes
   * stripped one at a time, so an entry for a specific snapshot wins over its family.
   */
  resolve(model: string): ResolvedPrice | undefined {
    const cached = this.resolved.get(model);
    if (cached !== undefined) return cached ?? undefined;
    let found = this.lookup(model);
    let name = model.trim().toLowerCase();
    found ??= this.lookup(name);
    if (!found) {
      name = name.slice(name.lastIndexOf('/') + 1).replace(VENDOR_PREFIX, '');
      found = this.lookup(name);
    }
    for (let next = name.replace(SUFFIX, ''); !found && next !== name; next = name.replace(SUFFIX, '')) {
      name = next;
      found = this.lookup(name);
    }
    // Model names come from callers; a bounded memo keeps a flood of distinct names from growing it.
    if (this.resolved.size < 10_000) this.resolved.set(model, found ?? null);
    return found;
  }
}
