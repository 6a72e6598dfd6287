import {
  type PriceEntry,
  PriceTable,
  type RateField,
  type ResolvedPrice,
  TIER_FIELD,
} from './price-table.js';

/** A cost as the service records it: `known: false` when token usage named a model without a price. */
export interface PricedCost {
  cost: number;
  known: boolean;
}

/**
 * What one call used, in the wire's convention (event-bodies.ts): `prompt` is the whole input,
 * `cachedRead` and `cacheWrite` parts of it; `reasoning` is part of `completion`.
 */
export interface TokenUsage {
  prompt: number;
  completion: number;
  cachedRead?: number | undefined;
  cacheWrite?: number | undefined;
  /** Of `cacheWrite`, the tokens written to live an hour (Anthropic's 1-hour cache, its own rate). */
  cacheWriteHour?: number | undefined;
  reasoning?: number | undefined;
  batch?: boolean | undefined;
}

let active: PriceTable | undefined;

/**
 * The table this service prices with: the built-in one unless `cas serve --prices` / `cas import
 * --prices` merged a file over it at start-up. One per process (a worker thread has its own), as
 * a service is one per process.
 */
export function activePrices(): PriceTable {
  active ??= PriceTable.builtIn();
  return active;
}

export function setActivePrices(table: PriceTable): void {
  active = table;
}

/** Each entry's input-tier thresholds (thousands of tokens): read once, not per priced call. */
const inputTiers = new WeakMap<PriceEntry, readonly number[]>();

function tiersOf(entry: PriceEntry): readonly number[] {
  let tiers = inputTiers.get(entry);
  if (tiers === undefined) {
    tiers = Object.keys(entry).flatMap((key) => {
      const m = TIER_FIELD.exec(key);
      return m?.[1] === 'input_cost_per_token' ? [Number(m[2])] : [];
    });
    inputTiers.set(entry, tiers);
  }
  return tiers;
}

/** The tier a call's input falls in: the largest `_above_<N>k_tokens` threshold of the input rate it exceeds. */
function tierOf(entry: PriceEntry, promptTokens: number): string | undefined {
  let best: number | undefined;
  for (const n of tiersOf(entry)) {
    if (promptTokens > n * 1000 && (best === undefined || n > best)) best = n;
  }
  return best === undefined ? undefined : `_above_${best}k_tokens`;
}

function rateOf(entry: PriceEntry, field: RateField, tier: string | undefined): number | undefined {
  const tiered = tier === undefined ? undefined : entry[`${field}${tier}`];
  return typeof tiered === 'number' ? tiered : entry[field];
}

/**
 * decisions §5 with issue 19's detail: uncached input at the input rate, cache reads and writes at
 * their own rates (the input rate where the table has none; writes that live an hour at theirs, else
 * at the writes' rate), completion at the output rate and its
 * reasoning part at the reasoning rate (else output). A call whose whole input exceeds a tier's
 * threshold is priced at that tier's rates throughout, as Anthropic and Google bill it. A batch call
 * uses the table's `*_batches` rates where it has them, else the standard ones.
 */
export function priceCall(resolved: ResolvedPrice, usage: TokenUsage): number {
  const { entry } = resolved;
  const tier = tierOf(entry, usage.prompt);
  const input = rateOf(entry, 'input_cost_per_token', tier) ?? 0;
  const output = rateOf(entry, 'output_cost_per_token', tier) ?? 0;
  const batchIn = usage.batch ? entry.input_cost_per_token_batches : undefined;
  const batchOut = usage.batch ? entry.output_cost_per_token_batches : undefined;
  const read = usage.cachedRead ?? 0;
  const written = usage.cacheWrite ?? 0;
  const hour = Math.min(usage.cacheWriteHour ?? 0, written);
  const writeRate = rateOf(entry, 'cache_creation_input_token_cost', tier) ?? input;
  const reasoning = Math.min(usage.reasoning ?? 0, usage.completion);
  const uncached = Math.max(0, usage.prompt - read - written);
  const cost =
    uncached * (batchIn ?? input) +
    read * (rateOf(entry, 'cache_read_input_token_cost', tier) ?? input) +
    (written - hour) * writeRate +
    hour * (rateOf(entry, 'cache_creation_input_token_cost_above_1hr', tier) ?? writeRate) +
    (usage.completion - reasoning) * (batchOut ?? output) +
    reasoning * (rateOf(entry, 'output_cost_per_reasoning_token', tier) ?? batchOut ?? output);
  return roundCost(cost);
}

/** The cost of a call priced from the active table; an unknown model costs 0, marked unknown (never $0 silently). */
export function tokenCost(model: string, usage: TokenUsage, table: PriceTable = activePrices()): PricedCost {
  const resolved = table.resolve(model);
  if (!resolved) return { cost: 0, known: false };
  return { cost: priceCall(resolved, usage), known: true };
}

/** Sums of many small float prices drift (0.1 + 0.2); 12 decimals keep every real price exact. */
export function roundCost(value: number): number {
  return Math.round(value * 1e12) / 1e12;
}
