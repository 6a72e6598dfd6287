import { numberFromDigits, scalarFromText } from './api-params.js';
import {
  type ChartControlsByKind,
  type ChartKind,
  type ControlsOptions,
  type Parsed,
  parseChartControls,
} from './chart-controls.js';
import { TEXT_OPERATORS } from './chart-filters.js';
import { formatPath, type Issue } from './errors.js';
import { FORBIDDEN_KEYS } from './primitives.js';

/**
 * Decodes `chartControls` from a query string (decisions §1): compact JSON in one parameter, or the
 * bracket ("deepObject") form browsers build, `chartControls[range][start]=...`. Bracket values
 * arrive as strings, so fields the schema types as numbers or scalars are coerced here, and only here:
 * the JSON form is exact and is never coerced.
 */

export type QueryRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

const ROOT = 'chartControls';
const BRACKET_KEY = /^chartControls((?:\[[^[\]]*\])+)$/;
const SEGMENT = /\[([^[\]]*)\]/g;
const INDEX = /^(0|[1-9]\d*)$/;
/** Deepest legitimate key is ~9 segments (userFilters[0][performed_events][0][with][0][values][0]). */
const MAX_SEGMENTS = 12;
const NUMBER_FIELDS: ReadonlySet<string> = new Set(['number_of', 'number']);
const SCALAR_LIST_FIELDS: ReadonlySet<string> = new Set(['values', 'property_values', 'trait_values']);

interface Leaf {
  kind: 'leaf';
  values: readonly string[];
  /** From a `[]` suffix: always an array, even with one value. */
  list: boolean;
}
interface Branch {
  kind: 'branch';
  children: Map<string, Node>;
}
type Node = Leaf | Branch;

function issuePath(segments: readonly string[]): string {
  return formatPath(segments.map((s) => (INDEX.test(s) ? Number(s) : s))) || ROOT;
}

function coerceLeafValue(value: string, field: string | undefined, inList: boolean, text: boolean): unknown {
  if (text) return value;
  if (inList) return scalarFromText(value);
  if (field !== undefined && NUMBER_FIELDS.has(field)) return numberFromDigits(value);
  return value;
}

/** Why a key cannot go where an earlier key already put something, if it cannot. */
function clash(existing: Node | undefined, last: boolean): string | undefined {
  if (!existing) return undefined;
  if (last)
    return existing.kind === 'leaf' ? 'given more than once' : 'given both as a value and as an object';
  return existing.kind === 'leaf' ? 'given both as a value and as an object' : undefined;
}

class TreeBuilder {
  readonly root: Branch = { kind: 'branch', children: new Map() };
  readonly issues: Issue[] = [];

  insert(segments: readonly string[], values: readonly string[], list: boolean): void {
    let node = this.root;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      const here = segments.slice(0, i + 1);
      const existing = node.children.get(segment);
      const last = i === segments.length - 1;
      const problem = FORBIDDEN_KEYS.has(segment) ? `key "${segment}" is not allowed` : clash(existing, last);
      if (problem) {
        this.fail(here, problem);
        return;
      }
      if (last) {
        node.children.set(segment, { kind: 'leaf', values, list });
        return;
      }
      const next: Branch = existing?.kind === 'branch' ? existing : { kind: 'branch', children: new Map() };
      node.children.set(segment, next);
      node = next;
    }
  }

  fail(segments: readonly string[], message: string): void {
    this.issues.push({ path: issuePath(segments), message });
  }

  /**
   * `field` is the object key this node sits under; array elements inherit their array's key. `text`:
   * the values of a filter whose operator matches text (TEXT_OPERATORS), kept as given.
   */
  toValue(
    node: Node,
    segments: readonly string[],
    field: string | undefined,
    inList: boolean,
    text = false,
  ): unknown {
    const listField = inList || (field !== undefined && SCALAR_LIST_FIELDS.has(field));
    if (node.kind === 'leaf') {
      const values = node.values.map((v) => coerceLeafValue(v, field, listField, text));
      // A lone `values=x` still means a one-element list: the schema wants an array there.
      if (node.list || values.length > 1 || (listField && !inList)) return values;
      return values[0];
    }
    const keys = [...node.children.keys()];
    if (keys.length > 0 && keys.every((k) => INDEX.test(k))) {
      const indices = keys.map(Number).sort((a, b) => a - b);
      if (indices.some((n, i) => n !== i)) {
        this.fail(segments, 'array indices must run 0, 1, 2, ... without gaps');
        return [];
      }
      return indices.map((i) => {
        const child = node.children.get(String(i))!;
        return this.toValue(child, [...segments, String(i)], field, listField, text);
      });
    }
    const operator = node.children.get('operator');
    const textValues =
      operator?.kind === 'leaf' && operator.values.length === 1 && TEXT_OPERATORS.has(operator.values[0]!);
    const out: Record<string, unknown> = {};
    for (const [key, child] of node.children) {
      out[key] = this.toValue(child, [...segments, key], key, false, textValues && key === 'values');
    }
    return out;
  }
}

function fromJson(raw: string | readonly string[]): Parsed<unknown> {
  if (typeof raw !== 'string') {
    return { ok: false, issues: [{ path: ROOT, message: 'given more than once' }] };
  }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, issues: [{ path: ROOT, message: 'not valid JSON' }] };
  }
}

/** The raw chartControls value of a query, not yet validated. Other parameters are ignored. */
export function controlsFromQuery(query: QueryRecord): Parsed<unknown> {
  const bracketKeys = Object.keys(query).filter((k) => k.startsWith(`${ROOT}[`));
  const json = query[ROOT];
  if (json !== undefined && bracketKeys.length > 0) {
    return { ok: false, issues: [{ path: ROOT, message: 'give it as JSON or as bracket keys, not both' }] };
  }
  if (json !== undefined) return fromJson(json);
  if (bracketKeys.length === 0) return { ok: false, issues: [{ path: ROOT, message: 'is required' }] };

  const builder = new TreeBuilder();
  for (const key of bracketKeys) {
    const raw = query[key];
    const match = BRACKET_KEY.exec(key);
    if (raw === undefined) continue;
    if (!match?.[1]) {
      builder.issues.push({ path: ROOT, message: `malformed query key "${key}"` });
      continue;
    }
    const segments = [...match[1].matchAll(SEGMENT)].map((m) => m[1] ?? '');
    const list = segments.at(-1) === '';
    if (list) segments.pop();
    if (segments.length === 0 || segments.includes('')) {
      builder.issues.push({ path: ROOT, message: `malformed query key "${key}"` });
      continue;
    }
    if (segments.length > MAX_SEGMENTS) {
      builder.fail(segments.slice(0, MAX_SEGMENTS), 'nested too deeply');
      continue;
    }
    builder.insert(segments, typeof raw === 'string' ? [raw] : raw, list);
  }
  const value = builder.toValue(builder.root, [], undefined, false);
  return builder.issues.length > 0 ? { ok: false, issues: builder.issues } : { ok: true, value };
}

/** Query string to validated chartControls with defaults applied: what a chart route needs. */
export function parseChartControlsQuery<K extends ChartKind>(
  kind: K,
  query: QueryRecord,
  options: ControlsOptions = {},
): Parsed<ChartControlsByKind[K]> {
  const raw = controlsFromQuery(query);
  return raw.ok ? parseChartControls(kind, raw.value, options) : raw;
}
