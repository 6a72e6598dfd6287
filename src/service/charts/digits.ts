/**
 * A sum or average as the number its digits mean: a double's sum carries noise in its last bits
 * (`210.29999999999998` for a sum of 10 through 60, 0.1 and 0.2), and DuckDB sums in parallel, in
 * an order that varies, so the same data answered `876.6189999999998` or `…99` (found by probing).
 * 15 significant digits, what a double holds exactly, leave the noise out.
 */
export function exactDigits(value: number): number {
  return Number.isFinite(value) ? Number(value.toPrecision(15)) : value;
}
