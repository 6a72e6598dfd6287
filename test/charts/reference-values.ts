import type { CountOperator, PropertyFilter } from '../../src/shared/chart-filters.js';
import type { Scalar } from '../../src/shared/primitives.js';
import { isIsoInstant } from '../../src/shared/time-bins.js';
import type { Json } from '../helpers/seed.js';

/**
 * Reference semantics of property values (decisions §6), written from the rules rather than from
 * the SQL: plain TypeScript over parsed JSON. Test-only. User regexes run as JS RegExp here, which is
 * fine for the RE2-compatible patterns the generators produce; the service never runs them in JS.
 */

export type Value = Json | undefined;

/** A property or trait as present (JSON null counts as absent). */
export function present(bag: Record<string, Json> | null | undefined, name: string): Value {
  if (!bag || !Object.hasOwn(bag, name)) return undefined;
  const v = bag[name];
  return v === null ? undefined : v;
}

export function lookup(
  properties: Record<string, Json> | null | undefined,
  traits: Record<string, Json> | undefined,
  name: string,
): Value {
  return present(properties, name) ?? present(traits, name);
}

export function typedEquals(v: Value, x: Scalar): boolean {
  return typeof v === typeof x && v === x;
}

/** The text a scalar shows: the string itself, `true`, `1.5`; arrays and objects have none. */
export function textOf(v: Value): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function compare(v: Value, x: Scalar): number | undefined {
  if (typeof x === 'number') return typeof v === 'number' ? v - x : undefined;
  if (typeof v !== 'string' || !isIsoInstant(v)) return undefined;
  return Date.parse(v) - Date.parse(String(x));
}

function positive(f: PropertyFilter, v: Value): boolean {
  const [a, b] = f.values;
  switch (f.operator) {
    case 'eq':
    case 'neq':
    case 'in':
    case 'nin':
      return f.values.some((x) => typedEquals(v, x));
    case 'case_insensitive_eq':
    case 'case_insensitive_neq': {
      const t = textOf(v);
      return t !== undefined && t.toLowerCase() === String(a).toLowerCase();
    }
    case 'regex':
    case 'not_regex': {
      const t = textOf(v);
      return t !== undefined && new RegExp(String(a)).test(t);
    }
    case 'gt':
      return (compare(v, a!) ?? Number.NaN) > 0;
    case 'gte':
      return (compare(v, a!) ?? Number.NaN) >= 0;
    case 'lt':
      return (compare(v, a!) ?? Number.NaN) < 0;
    case 'lte':
      return (compare(v, a!) ?? Number.NaN) <= 0;
    case 'between':
      return (compare(v, a!) ?? Number.NaN) >= 0 && (compare(v, b!) ?? Number.NaN) <= 0;
  }
}

const NEGATIVE = new Set(['neq', 'nin', 'case_insensitive_neq', 'not_regex']);

export function passes(f: PropertyFilter, v: Value): boolean {
  if (v === undefined) return NEGATIVE.has(f.operator);
  return NEGATIVE.has(f.operator) ? !positive(f, v) : positive(f, v);
}

export function countHolds(count: number, op: CountOperator, n: number): boolean {
  switch (op) {
    case 'eq':
      return count === n;
    case 'gt':
      return count > n;
    case 'gte':
      return count >= n;
    case 'lt':
      return count < n;
    case 'lte':
      return count <= n;
  }
}

/** Group key of a value: index of the first listed value it equals, or its text when none are listed. */
export function groupKeyOf(v: Value, listed: ReadonlyArray<Scalar> | undefined): string | undefined {
  if (listed === undefined) return textOf(v);
  const i = listed.findIndex((x) => typedEquals(v, x));
  return i < 0 ? undefined : String(i);
}

export function listedOf(values: ReadonlyArray<Scalar> | undefined): ReadonlyArray<Scalar> | undefined {
  return values !== undefined && values.length > 0 ? values : undefined;
}

/** Keys by weight descending, ties by label in code-unit order, at most `cap`. */
export function heaviest(weights: ReadonlyMap<string, number>, cap: number): string[] {
  return [...weights.entries()]
    .sort(([a, wa], [b, wb]) => wb - wa || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, cap)
    .map(([k]) => k);
}

/** The key of the `(none)` group here: no text the generators make starts with a NUL. */
export const NONE_KEY = '\u0000(none)';

/**
 * Group key of a row by its value (decisions §6): a listed index (undefined when it equals none of
 * them: left out), or the value's text, or NONE_KEY when it has none (absent, null, array, object).
 */
export function groupOfValue(v: Value, listed: ReadonlyArray<Scalar> | undefined): string | undefined {
  return listed === undefined ? (textOf(v) ?? NONE_KEY) : groupKeyOf(v, listed);
}

/** Keys of the groups shown: listed in order; else the heaviest observed ones, then `(none)` if any. */
export function shownKeys(
  weights: ReadonlyMap<string, number>,
  listed: ReadonlyArray<Scalar> | undefined,
): string[] {
  if (listed) return listed.map((_, i) => String(i));
  const observed = new Map([...weights].filter(([k]) => k !== NONE_KEY));
  return [...heaviest(observed, 50), ...(weights.has(NONE_KEY) ? [NONE_KEY] : [])];
}

export function groupLabel(key: string, listed: ReadonlyArray<Scalar> | undefined): string {
  return listed ? String(listed[Number(key)]) : key === NONE_KEY ? '(none)' : key;
}
