import { PRICES_AS_OF, PriceTable } from './price-table.js';

export { PRICES_AS_OF };

/**
 * The built-in table (prices/model-prices.json, dated, sources cited there) as USD per million tokens
 * [input, output], for consumers that price only prompt and completion (the import benchmark's
 * yardstick). The service prices with price-table.ts and costs.ts.
 */
export const MODEL_PRICES: ReadonlyMap<string, readonly [number, number]> = new Map(
  [...PriceTable.builtIn().entries].flatMap(([model, e]) =>
    e.input_cost_per_token === undefined || e.output_cost_per_token === undefined
      ? []
      : [[model, [perMillion(e.input_cost_per_token), perMillion(e.output_cost_per_token)]] as const],
  ),
);

function perMillion(perToken: number): number {
  return Math.round(perToken * 1e6 * 1e9) / 1e9;
}
