import { basename } from 'node:path';
import { COMMON_FIELDS, KIND_FIELDS, type MappingSpec, NESTED_FIELDS } from './mapping-spec.js';
import type { RawRecord, RecordKind } from './types.js';
import { atPath, inferScalar } from './values.js';

/** Where an unmapped column or key goes: forced by a `prop.` / `trait.` prefix, or by the record kind. */
export type ExtraTarget = 'prop' | 'trait' | 'auto';

export interface Extra {
  name: string;
  value: unknown;
  target: ExtraTarget;
}

/**
 * Reads mapped fields out of one record, CSV or JSONL alike: the mapped source first, then the
 * `--set` constant. Empty CSV cells count as absent (CSV cannot tell "" from missing).
 */
export interface RecordAccess {
  get(field: string): unknown;
  /** The record's own value of a field, without the `--set` constant. */
  own(field: string): unknown;
  /** The record has the field, though perhaps empty (a JSONL key that is not null). */
  has(field: string): boolean;
  /**
   * The column a field is mapped to (`--map`/`--mapping`) when the file has no such column (CSV: its
   * header is known); undefined otherwise, JSONL included (a key may be missing from one line only).
   */
  absentSource(field: string): string | undefined;
  /** JSONL: each record has keys of its own, so a mapped source may be missing from one record only. */
  readonly keyed: boolean;
  /** Columns/keys no field of `kind` reads: they become properties or traits. */
  extras(kind: RecordKind): Extra[];
}

const STRUCTURAL: ReadonlySet<string> = new Set<string>([...COMMON_FIELDS, ...NESTED_FIELDS]);

export function targetOf(name: string): ExtraTarget {
  if (name.startsWith('prop.')) return 'prop';
  if (name.startsWith('trait.')) return 'trait';
  return 'auto';
}

export function stripTarget(name: string): string {
  return name.startsWith('prop.') ? name.slice(5) : name.startsWith('trait.') ? name.slice(6) : name;
}

/** What a spec implies for every record; computed once per run. */
export interface AccessPlan {
  spec: MappingSpec;
  /** Roots of mapping sources: those columns/keys are read by a field, not copied as properties. */
  consumed: ReadonlySet<string>;
  /** Paths of mapped JSONL sources, split once. */
  paths: ReadonlyMap<string, readonly string[]>;
  /** `--map prop.x=...` / `--set trait.y=...` targets. */
  forced: readonly string[];
  /** Per CSV header: field → column index, and extra columns per kind. */
  headers: WeakMap<readonly string[], HeaderPlan>;
  /** Per kind: `--map` / `--set` targets it has no field for (see `strayTargets`). */
  strays: Map<RecordKind, readonly string[]>;
}

interface HeaderPlan {
  index: Map<string, number>;
  /** Columns read as a field their name spells in another case (`Timestamp`, `User ID`): name → field. */
  aliased: Map<string, string>;
  extras: Map<RecordKind, Array<{ i: number; name: string; target: ExtraTarget }>>;
}

const FIELD_NAMES: ReadonlySet<string> = new Set<string>([
  ...COMMON_FIELDS,
  ...NESTED_FIELDS,
  ...Object.values(KIND_FIELDS).flat(),
]);

/**
 * The field a header name spells in another case or with spaces (`Timestamp`, `User ID`, `user-id`):
 * read as a property, `Timestamp` left every event stamped on arrival (found by probing). Only when
 * no column has the field's own name and no --map names it.
 */
function fieldSpelled(name: string, header: readonly string[], spec: MappingSpec): string | undefined {
  const field = name.toLowerCase().replace(/[\s-]+/g, '_');
  return field !== name && FIELD_NAMES.has(field) && !header.includes(field) && !spec.sources.has(field)
    ? field
    : undefined;
}

export function planAccess(spec: MappingSpec): AccessPlan {
  const paths = new Map<string, readonly string[]>();
  for (const [field, source] of spec.sources) paths.set(field, source.split('.'));
  return {
    spec,
    consumed: new Set([...spec.sources.values()].map((s) => s.split('.')[0] ?? s)),
    paths,
    forced: [...new Set([...spec.sources.keys(), ...spec.defaults.keys()])].filter(
      (f) => targetOf(f) !== 'auto',
    ),
    headers: new WeakMap(),
    strays: new Map(),
  };
}

/**
 * Targets of `--map` / `--set` that records of `kind` have no field for (`--map name=channel` on an
 * event: `name` is a function's): kept under the target's name, as a column of that name would be,
 * where they were read by no field and lost (found by probing).
 */
function strayTargets(kind: RecordKind, plan: AccessPlan): readonly string[] {
  let list = plan.strays.get(kind);
  if (!list) {
    list = [...new Set([...plan.spec.sources.keys(), ...plan.spec.defaults.keys()])].filter(
      (f) => f !== 'kind' && targetOf(f) === 'auto' && !STRUCTURAL.has(f) && !KIND_FIELDS[kind].includes(f),
    );
    plan.strays.set(kind, list);
  }
  return list;
}

/** The stray targets' values (a `--set` constant, or a CSV cell, read as a column's would be). */
function strayExtras(access: RecordAccess, kind: RecordKind, plan: AccessPlan, out: Extra[]): Extra[] {
  for (const field of strayTargets(kind, plan)) {
    const own = access.own(field);
    const value =
      own === undefined
        ? access.get(field)
        : typeof own === 'string' && !access.keyed
          ? inferScalar(own)
          : own;
    if (value === undefined) continue;
    out.push({ name: field, value: own === undefined ? inferScalar(String(value)) : value, target: 'auto' });
  }
  return out;
}

function isConsumed(name: string, kind: RecordKind, plan: AccessPlan): boolean {
  return plan.consumed.has(name) || STRUCTURAL.has(name) || KIND_FIELDS[kind].includes(name);
}

function headerPlan(header: readonly string[], plan: AccessPlan): HeaderPlan {
  let hp = plan.headers.get(header);
  if (!hp) {
    hp = { index: new Map(), aliased: new Map(), extras: new Map() };
    header.forEach((name, i) => {
      if (name !== '' && !hp?.index.has(name)) hp?.index.set(name, i);
    });
    header.forEach((name, i) => {
      const field = fieldSpelled(name, header, plan.spec);
      if (field !== undefined && !hp?.index.has(field)) {
        hp?.index.set(field, i);
        hp?.aliased.set(name, field);
      }
    });
    plan.headers.set(header, hp);
  }
  return hp;
}

function csvExtras(header: readonly string[], hp: HeaderPlan, kind: RecordKind, plan: AccessPlan) {
  let list = hp.extras.get(kind);
  if (!list) {
    list = [];
    header.forEach((name, i) => {
      const field = hp.aliased.get(name);
      if (name !== '' && !isConsumed(name, kind, plan) && !(field && isConsumed(field, kind, plan)))
        list?.push({ i, name: stripTarget(name), target: targetOf(name) });
    });
    hp.extras.set(kind, list);
  }
  return list;
}

function fill(template: string, record: RawRecord): string {
  if (!template.includes('{')) return template;
  return template
    .replaceAll('{line}', String(record.source.line))
    .replaceAll('{file}', basename(record.source.file));
}

class CsvAccess implements RecordAccess {
  private readonly hp: HeaderPlan;
  constructor(
    private readonly record: RawRecord,
    private readonly plan: AccessPlan,
    private readonly header: readonly string[],
    private readonly cells: readonly string[],
  ) {
    this.hp = headerPlan(header, plan);
  }

  get(field: string): unknown {
    const cell = this.own(field);
    if (cell !== undefined) return cell;
    const d = this.plan.spec.defaults.get(field);
    return d === undefined ? undefined : fill(d, this.record);
  }

  own(field: string): string | undefined {
    const index = this.hp.index.get(this.plan.spec.sources.get(field) ?? field);
    const cell = index === undefined ? undefined : this.cells[index];
    return cell === '' ? undefined : cell;
  }

  /** An empty cell is no value: CSV cannot tell it from an empty text. */
  has(field: string): boolean {
    return this.own(field) !== undefined;
  }

  readonly keyed = false;

  absentSource(field: string): string | undefined {
    const source = this.plan.spec.sources.get(field);
    return source !== undefined && !this.hp.index.has(source) ? source : undefined;
  }

  extras(kind: RecordKind): Extra[] {
    const out: Extra[] = [];
    for (const { i, name, target } of csvExtras(this.header, this.hp, kind, this.plan)) {
      const cell = this.cells[i];
      if (cell !== undefined && cell !== '') out.push({ name, value: inferScalar(cell), target });
    }
    return strayExtras(this, kind, this.plan, out);
  }
}

class JsonlAccess implements RecordAccess {
  readonly keyed = true;
  constructor(
    private readonly record: RawRecord,
    private readonly plan: AccessPlan,
    private readonly obj: Record<string, unknown>,
  ) {}

  get(field: string): unknown {
    const v = this.own(field);
    if (v !== undefined) return v;
    const d = this.plan.spec.defaults.get(field);
    return d === undefined ? undefined : fill(d, this.record);
  }

  own(field: string): unknown {
    const v = this.value(field);
    return v === null || v === '' ? undefined : v;
  }

  has(field: string): boolean {
    const v = this.value(field);
    return v !== undefined && v !== null;
  }

  absentSource(): undefined {
    return undefined;
  }

  private value(field: string): unknown {
    const path = this.plan.paths.get(field);
    const key = path === undefined ? field : path.length === 1 ? path[0]! : undefined;
    return key === undefined
      ? atPath(this.obj, path!)
      : Object.hasOwn(this.obj, key)
        ? this.obj[key]
        : undefined;
  }

  extras(kind: RecordKind): Extra[] {
    const out: Extra[] = [];
    for (const name of Object.keys(this.obj)) {
      const v = this.obj[name];
      if (v === undefined || v === null || isConsumed(name, kind, this.plan)) continue;
      out.push({ name: stripTarget(name), value: v, target: targetOf(name) });
    }
    return strayExtras(this, kind, this.plan, out);
  }
}

export function accessFor(record: RawRecord, plan: AccessPlan): RecordAccess {
  const { value } = record;
  return value.format === 'csv'
    ? new CsvAccess(record, plan, value.header, value.cells)
    : new JsonlAccess(record, plan, value.value);
}
