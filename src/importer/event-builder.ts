import { isPlainObject } from '../shared/event-properties.js';
import { FORBIDDEN_KEYS } from '../shared/primitives.js';
import { loneSurrogateProblem } from './lone-surrogates.js';
import { type MappingSpec, misplaced, NESTED_FIELDS } from './mapping-spec.js';
import type { Extra, RecordAccess } from './record-access.js';
import { stripTarget, targetOf } from './record-access.js';
import type { LeftOut, RecordKind } from './types.js';
import { asJsonText, asNumber, asProperty, asText, asTrait, type Coerced } from './values.js';

/** Thrown only inside this module's builders and caught by mapRecord: the first bad field ends a record. */
export class FieldError extends Error {}

export function need<T>(result: Coerced<T>): T {
  if (!result.ok) throw new FieldError(result.reason);
  return result.value;
}

/** Reads fields of one record with the coercions of cli.md, naming the column a bad value came from. */
export class FieldReader {
  constructor(
    private readonly access: RecordAccess,
    private readonly spec: MappingSpec,
  ) {}

  /** `user` read from column "instruction" is reported as `user (from "instruction")`. */
  label(field: string): string {
    const source = this.spec.sources.get(field);
    return source === undefined ? field : `${field} (from "${source}")`;
  }

  raw(field: string): unknown {
    return this.access.get(field);
  }

  /** The record's own value, `--set` aside. */
  own(field: string): unknown {
    return this.access.own(field);
  }

  /** Where a field's value came from, for a message: `column "plan"`, `key "p" (mapped to trait.plan)`. */
  origin(field: string, place: 'column' | 'key'): string {
    const source = this.spec.sources.get(field);
    return source === undefined ? `${place} "${field}"` : `${place} "${source}" (mapped to ${field})`;
  }

  text(field: string): string | undefined {
    const v = this.access.get(field);
    return v === undefined ? undefined : need(asText(this.label(field), v));
  }

  requiredText(field: string, what: string): string {
    const v = this.text(field);
    if (v === undefined) {
      const absent = this.absent(field);
      throw new FieldError(
        absent === undefined
          ? `missing ${what}: no value for ${this.label(field)}; map another column with --map ${field}=<column>`
          : `missing ${what}: ${absent}`,
      );
    }
    return v;
  }

  /**
   * Why a mapped field has no value when its column is not in the file at all: the advice to map a
   * column misled whoever had mapped one with a typo (found by probing).
   */
  absent(field: string): string | undefined {
    const column = this.access.absentSource(field);
    if (column !== undefined) return `${field} is mapped to column "${column}", which this file has not`;
    const key = this.spec.sources.get(field);
    return key !== undefined && this.access.keyed && !this.access.has(field)
      ? `${field} is mapped to key "${key}", which this record has not`
      : undefined;
  }

  /**
   * A turn's utterance: required, but a JSONL record's `""` is an empty one (an image-only message,
   * as the wire allows), where an empty value of other fields means none.
   */
  utterance(field: string, what: string): string {
    if (this.text(field) === undefined && this.access.has(field)) return '';
    return this.requiredText(field, what);
  }

  jsonText(field: string): string | undefined {
    const v = this.access.get(field);
    return v === undefined ? undefined : need(asJsonText(this.label(field), v));
  }

  number(field: string, integer = false): number | undefined {
    const v = this.access.get(field);
    return v === undefined ? undefined : need(asNumber(this.label(field), v, integer));
  }

  /** A nested object (`properties`, `traits`, `attributes`); CSV may give it as JSON text. */
  object(field: string): Record<string, unknown> | undefined {
    let v = this.access.get(field);
    if (v === undefined) return undefined;
    if (typeof v === 'string') {
      const text = v;
      try {
        v = JSON.parse(text);
      } catch {
        throw new FieldError(`${this.label(field)} must be a JSON object`);
      }
      const lone = loneSurrogateProblem(text, v);
      if (lone !== undefined) throw new FieldError(`${this.label(field)}: ${lone}`);
    }
    if (!isPlainObject(v)) throw new FieldError(`${this.label(field)} must be an object`);
    return v;
  }

  /** `--map prop.x=...` and `--set prop.x=...` values of this record. */
  forced(targets: readonly string[]): Extra[] {
    const out: Extra[] = [];
    for (const t of targets) {
      const v = this.access.get(t);
      if (v !== undefined) out.push({ name: stripTarget(t), value: v, target: targetOf(t) });
    }
    return out;
  }
}

/**
 * Refuses a value the record puts where its kind has no place (a `trait.` column on a turn, a
 * `properties` object on an identify): the user named the target, so dropping the value would lose
 * data without a word. A `--set` constant is not the record's and applies only to the kinds it fits
 * (with `--kind`, buildMappingSpec refuses one that fits none).
 */
export function refuseMisplaced(
  kind: RecordKind,
  extras: readonly Extra[],
  forced: readonly string[],
  r: FieldReader,
  place: 'column' | 'key',
): void {
  for (const e of extras) {
    if (e.target === 'auto') continue;
    const field = `${e.target}.${e.name}`;
    const why = misplaced(kind, field);
    if (why !== undefined) throw new FieldError(`${place} "${field}": ${why}`);
  }
  for (const fields of [forced, NESTED_FIELDS]) {
    for (const field of fields) {
      if (r.own(field) === undefined) continue;
      const why = misplaced(kind, field);
      if (why !== undefined) throw new FieldError(`${r.origin(field, place)}: ${why}`);
    }
  }
}

/** The record's own values (FieldReader), to tell them from `--set` constants in a clash. */
export interface OwnValues {
  own(field: string): unknown;
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Properties (or traits) from, lowest precedence first: unforced extras, the nested object, forced
 * `prop.`/`trait.` values, then the kind's own fields. Keys come out sorted, so the same content always
 * serializes the same way (the event id is a hash of it). Unforced extras that are not valid values
 * (objects in JSONL) are left out; anything forced or nested must be valid. Two of the record's own
 * values for one name that differ (`plan` and `prop.plan`, a key and `properties.<key>`, a turn's
 * `cost` and `properties.cost`) refuse the record, naming both: one was dropped without a word (found
 * by probing). A `--set` constant is an override the user asked for, and keeps its precedence.
 */
export function collect(
  target: 'prop' | 'trait',
  extras: readonly Extra[],
  forced: readonly Extra[],
  nested: Record<string, unknown> | undefined,
  own: Record<string, unknown>,
  /** Receives the unforced extras left out, and why. */
  dropped?: LeftOut[],
  /** The nested object's name, for messages: `properties`, `traits` or `attributes`. */
  nestedName: string = target === 'prop' ? 'properties' : 'traits',
  /** Without it, every value is the record's own. */
  record?: OwnValues,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  // Which source gave a name before is found again only when the name comes twice with another
  // value (rare): tracking every name's source cost each mapped record about a microsecond.
  // Layers: 0 extras (`index` within them), 1 nested, 2 forced, 3 own.
  const labelAt = (key: string, layer: number, index: number): string => {
    const e = extras[index];
    if (layer === 0 && e) return e.target === 'auto' ? e.name : `${e.target}.${e.name}`;
    if (layer === 1) return `${nestedName}.${key}`;
    return layer === 2 ? `${target}.${key}` : key;
  };
  const constant = (field: string) => record !== undefined && record.own(field) === undefined;
  const constantAt = (key: string, layer: number): boolean =>
    layer === 2 ? constant(`${target}.${key}`) : layer === 3 && constant(key);
  const earlier = (key: string, layer: number, index: number): { layer: number; index: number } => {
    let found = { layer: 0, index: 0 };
    for (let i = 0; i < (layer === 0 ? index : extras.length); i++) {
      const e = extras[i];
      if (e?.name === key && (e.target === 'auto' || e.target === target)) found = { layer: 0, index: i };
    }
    if (layer > 1 && nested !== undefined && Object.hasOwn(nested, key)) found = { layer: 1, index: 0 };
    if (layer > 2 && forced.some((e) => e.target === target && e.name === key))
      found = { layer: 2, index: 0 };
    return found;
  };
  const put = (key: string, value: unknown, layer: number, index = 0) => {
    if (Object.hasOwn(out, key) && !sameValue(out[key], value) && !constantAt(key, layer)) {
      const before = earlier(key, layer, index);
      if (!constantAt(key, before.layer)) {
        throw new FieldError(
          `${target === 'prop' ? 'property' : 'trait'} "${key}" is given twice, by "${labelAt(key, before.layer, before.index)}" and by "${labelAt(key, layer, index)}", with different values`,
        );
      }
    }
    out[key] = value;
  };
  const coerce = target === 'prop' ? asProperty : asTrait;
  for (let i = 0; i < extras.length; i++) {
    const e = extras[i] as Extra;
    // The other target's values were refused before (refuseMisplaced).
    if (e.target !== 'auto' && e.target !== target) continue;
    // A `prop.` column was the wire's "properties.: keys must be 1 to 100 characters", naming no column.
    if (e.name === '') {
      const what = target === 'prop' ? 'property' : 'trait';
      // A JSON key "" (an extra of no prefix) said `"auto." names no property`, words it never wrote.
      throw new FieldError(
        e.target === 'auto'
          ? `the empty key "" names no ${what}: keys are 1 to 100 characters`
          : `"${e.target}." names no ${what}`,
      );
    }
    allowed(e.name);
    const c = coerce(e.name, e.value);
    if (c.ok) put(e.name, c.value, 0, i);
    else if (e.target !== 'auto') throw new FieldError(c.reason);
    else dropped?.push({ field: e.name, reason: c.reason });
  }
  if (nested) {
    for (const k of Object.keys(nested)) {
      allowed(k);
      put(k, nested[k], 1);
    }
  }
  for (const e of forced) {
    // Only a `--set` constant gets here with the other target (see refuseMisplaced): it fits other kinds.
    if (e.target !== target) continue;
    allowed(e.name);
    put(e.name, need(coerce(`${target}.${e.name}`, e.value)), 2);
  }
  for (const k in own) if (own[k] !== undefined) put(k, own[k], 3);
  const keys = Object.keys(out);
  if (keys.length === 0) return undefined;
  keys.sort();
  const sorted: Record<string, unknown> = {};
  for (const k of keys) sorted[k] = out[k];
  return sorted;
}

/** Assigning `__proto__` would replace the object's prototype instead of adding a key (decisions §1). */
function allowed(key: string): void {
  if (FORBIDDEN_KEYS.has(key)) throw new FieldError(`key "${key}" is not allowed`);
}
