import { z } from 'zod';
import { FORBIDDEN_KEY_MESSAGE, findJsonProblem, LONE_SURROGATE_MESSAGE } from './json-problem.js';

/**
 * Query-string parameters of the discovery, user, cohort and summary routes. Query strings carry
 * text only: object-valued parameters travel as compact JSON (decisions §1), numbers as digits, and
 * an empty value counts as absent (browsers send `?regex=`).
 */

const emptyToUndefined = (v: unknown) => (v === '' ? undefined : v);

/** An RE2 pattern, run by DuckDB (`regexp_matches`, anywhere in the text), never by JavaScript. */
export const regexParam = z
  .preprocess(emptyToUndefined, z.string().max(1000, 'must be at most 1000 characters').optional())
  .describe('RE2 regular expression, matched anywhere (anchor with ^ and $)');

/**
 * A number parameter's text as a number when it is written in digits (`12`, `-3`, `1.5`), absent when
 * empty; anything else stays text, which the schema refuses as "must be a number". `Number()` read
 * a space as 0 and `0x10` as 16, answering with no rows instead of a 400 (found by fuzzing).
 */
export function numberFromQuery(v: unknown): unknown {
  if (v === '' || v === undefined) return undefined;
  return typeof v === 'string' ? numberFromDigits(v) : v;
}

/** Text written in digits (`12`, `-3`, `1.5`) as its number; any other text as it is. */
export function numberFromDigits(value: string): string | number {
  return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

/** A non-negative whole number from the query string, `fallback` when absent, at most `max`. */
export function countParam(fallback: number, max: number) {
  return z.preprocess(
    numberFromQuery,
    z
      .number({ message: 'must be a number' })
      .int('must be a whole number')
      .nonnegative('must not be negative')
      .max(max, `must be at most ${max}`)
      .default(fallback),
  );
}

/** Same rule as the CLI's `--where`: a value that round-trips as a number is one, true/false are booleans. */
export function scalarFromText(value: string): string | number | boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  const n = Number(value);
  return value.trim() !== '' && Number.isFinite(n) && String(n) === value ? n : value;
}

/**
 * What a parameter rebuilt from bracket form (`picks[0][value]=5`) stands for: query strings carry
 * text only, so a route whose values may be numbers or booleans reads them as such here, where it
 * knows which are (a value of text stays text: `filter[user_id]=42` names the id "42"). The JSON form
 * is exact and never passes through this.
 */
export type BracketTypes = (name: string, rebuilt: unknown) => unknown;

/**
 * JSON text that must decode to `schema`; bracket form (`name[key]=v`) is rebuilt by `bracketObjects`
 * (its reserved keys refused by unsafeQueryKey). A reserved key or a lone surrogate anywhere in the
 * JSON is refused as in a body (decisions §1): `{"__proto__": …}` in a db filter was dropped by the
 * schema, and the route answered every document (found by probing).
 */
export function jsonParam<T extends z.ZodType>(schema: T) {
  return z.preprocess((v, ctx) => {
    if (typeof v !== 'string') return v;
    if (v === '') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      return v;
    }
    const found = findJsonProblem(parsed, { keys: true, strings: true });
    if (found === undefined) return parsed;
    const why = found.problem === 'forbidden key' ? FORBIDDEN_KEY_MESSAGE : LONE_SURROGATE_MESSAGE;
    ctx.addIssue({ code: 'custom', message: found.path === '' ? why : `${found.path}: ${why}` });
    return z.NEVER;
  }, schema);
}

const BRACKET = /^([A-Za-z_]+)((?:\[[^[\]]*\])+)$/;
const SEGMENT = /\[([^[\]]*)\]/g;
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The first parameter naming a key that would touch prototypes, plain (`__proto__=1`) or in bracket
 * form (`sort[constructor]=1`), as a path (`sort.constructor`): decisions §1 refuses such keys
 * anywhere, as the JSON form does.
 */
export function unsafeQueryKey(query: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of Object.keys(query)) {
    const parsed = bracketKey(key);
    // A plain parameter of a reserved name too: decisions §1 refuses them anywhere.
    if (parsed === undefined) {
      if (UNSAFE.has(key)) return key;
      continue;
    }
    const path = [parsed.name, ...parsed.path];
    if (path.some((p) => UNSAFE.has(p))) return path.join('.');
  }
  return undefined;
}

/** `picks[0][name]` → name `picks`, path `['0', 'name']`; undefined for a plain parameter. */
export function bracketKey(key: string): { name: string; path: string[] } | undefined {
  const match = BRACKET.exec(key);
  if (!match) return undefined;
  return { name: match[1]!, path: [...match[2]!.matchAll(SEGMENT)].map((m) => m[1]!) };
}

/**
 * Rebuilds bracket-form parameters (`range[start]=…`, `picks[0][name]=…`) into `name: object`, so
 * browser-style clients work as decisions §1 asks. Leaves stay strings unless `types` reads them; a
 * JSON `name` wins. Keys that would touch prototypes are never written (the service refuses them
 * first: unsafeQueryKey).
 */
export function bracketObjects(
  query: Readonly<Record<string, unknown>>,
  types?: BracketTypes,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...query };
  const rebuilt = new Set<string>();
  for (const [key, value] of Object.entries(query)) {
    const parsed = bracketKey(key);
    if (parsed === undefined) continue;
    delete out[key];
    const { name, path } = parsed;
    if (typeof query[name] === 'string') continue;
    if (path.length > 4 || path.some((p) => UNSAFE.has(p)) || UNSAFE.has(name)) continue;
    rebuilt.add(name);
    out[name] ??= /^\d+$/.test(path[0] ?? '') ? [] : {};
    let node = out[name] as Record<string, unknown>;
    path.forEach((segment, i) => {
      if (i === path.length - 1) node[segment] = Array.isArray(value) ? value[value.length - 1] : value;
      else {
        node[segment] ??= /^\d+$/.test(path[i + 1] ?? '') ? [] : {};
        node = node[segment] as Record<string, unknown>;
      }
    });
  }
  if (types !== undefined) for (const name of rebuilt) out[name] = types(name, out[name]);
  return out;
}

/** Optional scope of most read routes: one session or one conversation. */
export const scopeParams = {
  session_id: z.preprocess(emptyToUndefined, z.string().min(1).max(100).optional()),
  conversation_id: z.preprocess(emptyToUndefined, z.string().min(1).max(100).optional()),
  organization_id: z.string().optional().describe('accepted and ignored: the key names the organization'),
  app_id: z.string().optional().describe('accepted and ignored: X-App-ID names the project'),
};
