import { isPlainObject } from '../shared/event-properties.js';
import type { PropertyValue } from '../shared/primitives.js';

/** Safe integers only: a 19-digit order id must stay a string, not become a rounded number. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * `true`, `TRUE`, `True` (and the same of false) as a boolean, else undefined: one reading for a CSV
 * cell and a `--trait` or `--where` value (`TRUE` was a boolean imported and text from `cas identify`).
 * Not any case: a record's id is its content's hash, so a cell read otherwise than before (`tRUE`)
 * would store a re-imported record a second time.
 */
export function booleanWord(text: string): boolean | undefined {
  if (text === 'true' || text === 'TRUE' || text === 'True') return true;
  if (text === 'false' || text === 'FALSE' || text === 'False') return false;
  return undefined;
}

/**
 * A CSV cell's type, as cli.md asks for extra columns: numbers and true/false typed, the rest text.
 * Leading zeros (zip codes, ids) keep a string, as do integers too big to hold exactly.
 */
export function inferScalar(text: string): string | number | boolean {
  const boolean = booleanWord(text);
  if (boolean !== undefined) return boolean;
  if (text.length > 0 && text.length < 25 && NUMBER.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  }
  return text;
}

/**
 * `messages.0.content.answer` → the value at that path; array indexes are numbers. Own properties
 * only, so `constructor` or `__proto__` in a mapping can never reach a prototype.
 */
export function atPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (Array.isArray(current)) {
      const index = Number(key);
      current = Number.isInteger(index) && index >= 0 ? current[index] : undefined;
    } else if (isPlainObject(current) && Object.hasOwn(current, key)) {
      current = current[key];
    } else {
      return undefined;
    }
  }
  return current;
}

export type Coerced<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * A value in a rejection, as JSON: a quote or a line break in it is escaped, so the reader sees where
 * it ends (`got "1" spoof.jsonl:98: FAKE "2"` read as two values, found by probing).
 */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** Ids and names: strings as given, numbers written out (exports often carry numeric user ids). */
export function asText(field: string, value: unknown): Coerced<string> {
  if (typeof value === 'string') return { ok: true, value };
  if (typeof value === 'number' && Number.isFinite(value)) {
    // JSON readers keep 53 bits: two users 1234567890123456789 and ...790 would both read as ...800.
    if (Number.isInteger(value) && !Number.isSafeInteger(value))
      return {
        ok: false,
        reason: `${field} is a number past 2^53, which JSON readers round (it reads as ${String(value)}): write it as a string`,
      };
    return { ok: true, value: String(value) };
  }
  if (typeof value === 'boolean') return { ok: true, value: String(value) };
  return { ok: false, reason: `${field} must be text, got ${show(value)}` };
}

/** Function `args` / `result` are JSON text on the wire; a structured value is encoded for the caller. */
export function asJsonText(field: string, value: unknown): Coerced<string> {
  if (typeof value === 'string') return { ok: true, value };
  if (value === null || typeof value === 'object') return { ok: true, value: JSON.stringify(value) };
  return asText(field, value);
}

/**
 * Decimal notation only: `Number()` also reads `0x10` as 16, `0b11` as 3 and `0o7` as 7, which no
 * export means by a token count.
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export function asNumber(field: string, value: unknown, integer = false): Coerced<number> {
  const text = typeof value === 'string' ? value.trim() : undefined;
  const n =
    typeof value === 'number' ? value : text !== undefined && DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(n)) return { ok: false, reason: `${field} must be a number, got ${show(value)}` };
  if (integer && !Number.isInteger(n))
    return { ok: false, reason: `${field} must be a whole number, got ${show(value)}` };
  return { ok: true, value: n };
}

/** A value as a property: scalars, string arrays and number arrays pass; anything else is refused. */
export function asProperty(field: string, value: unknown): Coerced<PropertyValue> {
  if (typeof value === 'string' || typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value };
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return { ok: true, value: value as string[] };
    if (value.every((v) => typeof v === 'number' && Number.isFinite(v)))
      return { ok: true, value: value as number[] };
  }
  return {
    ok: false,
    reason: `${field} must be a string, number, boolean or a list of strings or numbers, got ${show(value)}`,
  };
}

/** Traits take scalars only (decisions §3). */
export function asTrait(field: string, value: unknown): Coerced<string | number | boolean> {
  if (typeof value === 'string' || typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value };
  return { ok: false, reason: `${field} must be a string, number or boolean, got ${show(value)}` };
}
