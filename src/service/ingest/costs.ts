import { MODEL_ALIASES, MODEL_PRICES } from './prices.js';

export interface ModelPrice {
  /** The table entry the model name resolved to. */
  model: string;
  inputPerMillion: number;
  outputPerMillion: number;
}

/** A cost as the service records it: `known: false` when token usage named a model without a price. */
export interface PricedCost {
  cost: number;
  known: boolean;
}

// Snapshot and version suffixes that do not change a family's price: dates, numbered revisions,
// `-latest`, `-preview-05-20`, Bedrock's `-v1:0`, Vertex's `@20240620`.
const SUFFIX =
  /(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{3,4}|-latest|-preview(?:-\d{2}-\d{2})?|-exp(?:-\d{4})?|-v\d+(?::\d+)?|@\d{8}|:[\w.-]+)$/;
const VENDOR_PREFIX = /^(?:anthropic|openai|google|mistral|meta)\./;

function lookup(name: string): ModelPrice | undefined {
  const key = MODEL_ALIASES.get(name) ?? name;
  const price = MODEL_PRICES.get(key);
  return price && { model: key, inputPerMillion: price[0], outputPerMillion: price[1] };
}

const resolved = new Map<string, ModelPrice | null>();

/**
 * The price of a model as callers write it: case-insensitive, with or without a provider path
 * (`openai/gpt-4o`, `models/gemini-1.5-pro`), and with dated snapshot suffixes stripped one at a
 * time until a table entry matches, so an entry for a specific snapshot wins over its family.
 */
export function priceOf(model: string): ModelPrice | undefined {
  const cached = resolved.get(model);
  if (cached !== undefined) return cached ?? undefined;
  let name = model.trim().toLowerCase();
  name = name.slice(name.lastIndexOf('/') + 1).replace(VENDOR_PREFIX, '');
  let found = lookup(name);
  for (let next = name.replace(SUFFIX, ''); !found && next !== name; next = name.replace(SUFFIX, '')) {
    name = next;
    found = lookup(name);
  }
  // Model names come from callers; a bounded memo keeps a flood of distinct names from growing it.
  if (resolved.size < 10_000) resolved.set(model, found ?? null);
  return found;
}

/** decisions §5: prompt_tokens × input price + completion_tokens × output price; unknown model → 0, unknown. */
export function tokenCost(model: string, promptTokens: number, completionTokens: number): PricedCost {
  const price = priceOf(model);
  if (!price) return { cost: 0, known: false };
  const cost = (promptTokens * price.inputPerMillion + completionTokens * price.outputPerMillion) / 1_000_000;
  return { cost: roundCost(cost), known: true };
}

/** Sums of many small float prices drift (0.1 + 0.2); 12 decimals keep every real price exact. */
export function roundCost(value: number): number {
  return Math.round(value * 1e12) / 1e12;
}
