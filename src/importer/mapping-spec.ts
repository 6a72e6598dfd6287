import { RECORD_KINDS, type RecordKind } from './types.js';

/** Fields every kind may carry (cli.md "Columns"); `kind` picks the record kind per record. */
export const COMMON_FIELDS = [
  'kind',
  'timestamp',
  'session_id',
  'conversation_id',
  'user_id',
  'device_id',
  'event_id',
] as const;

/** Each kind's own fields; anything else in a record becomes a property (traits for identify). */
export const KIND_FIELDS: Readonly<Record<RecordKind, readonly string[]>> = {
  turn: ['user', 'assistant', 'assistant_id', 'model', 'prompt_tokens', 'completion_tokens', 'cost'],
  usage: ['model', 'prompt_tokens', 'completion_tokens', 'cost'],
  function: ['name', 'args', 'result', 'runtime'],
  event: ['event'],
  identify: ['id'],
  alias: ['id', 'previous_id'],
  end_conversation: [],
  end_session: [],
  wire: [],
};

/** JSONL objects merged into the event as a whole (cli.md: "JSONL may nest properties / traits"). */
export const NESTED_FIELDS = ['properties', 'traits', 'attributes'] as const;

interface FreeForm {
  target: 'prop' | 'trait';
  nested: (typeof NESTED_FIELDS)[number];
  /** What the event calls them. */
  what: string;
}

/**
 * Where each kind keeps values beyond its own fields: `prop.`/`trait.` names the target, `nested` the
 * object a JSONL record may give whole. The wire has no other place for them (an alias has none).
 */
export const FREE_FORM: Readonly<Record<RecordKind, FreeForm | undefined>> = {
  turn: { target: 'prop', nested: 'properties', what: 'properties' },
  usage: { target: 'prop', nested: 'properties', what: 'properties' },
  function: { target: 'prop', nested: 'properties', what: 'properties' },
  event: { target: 'prop', nested: 'properties', what: 'properties' },
  end_conversation: { target: 'prop', nested: 'properties', what: 'properties' },
  identify: { target: 'trait', nested: 'traits', what: 'traits' },
  end_session: { target: 'trait', nested: 'attributes', what: 'attributes' },
  alias: undefined,
  wire: undefined,
};

const APPLIES: Readonly<Record<string, string>> = {
  prop: 'properties apply only to turn, usage, function, event and end_conversation records',
  trait: 'traits apply only to identify records (and end_session attributes)',
  properties: 'properties apply only to turn, usage, function, event and end_conversation records',
  traits: 'traits apply only to identify records',
  attributes: 'attributes apply only to end_session and end_conversation records',
};

/** A nested object a kind carries beside its free-form one: the wire's `attributes` of a conversation's end. */
const ALSO_NESTED: Readonly<Partial<Record<RecordKind, string>>> = { end_conversation: 'attributes' };

/**
 * Why a `prop.<name>` / `trait.<name>` value, or a nested `properties` / `traits` / `attributes`
 * object, has no place in a record of `kind` (undefined: it has one). Such a value is refused, never
 * dropped: the user named where it should go.
 */
export function misplaced(kind: RecordKind, field: string): string | undefined {
  const home = FREE_FORM[kind];
  const prefix = /^(prop|trait)\./.exec(field)?.[1];
  const nested = (NESTED_FIELDS as readonly string[]).includes(field) ? field : undefined;
  const wanted = prefix ?? nested;
  if (wanted === undefined || kind === 'wire') return undefined;
  if (nested !== undefined && ALSO_NESTED[kind] === nested) return undefined;
  if (home && (prefix ? home.target === prefix : home.nested === nested)) return undefined;
  const name = prefix ? field.slice(prefix.length + 1) : undefined;
  const instead = !home
    ? 'neither properties nor traits'
    : name !== undefined
      ? `${home.what} (${home.target}.${name})`
      : `${home.what} ("${home.nested}")`;
  return `${APPLIES[wanted]}; ${/^[aei]/.test(kind) ? 'an' : 'a'} ${kind} record takes ${instead}`;
}

/**
 * Why a kind with no free-form values (an alias) cannot hold a field of another kind: elsewhere such
 * a target is kept as a property or trait under its name (record-access.ts `strayTargets`).
 */
function unheld(kind: RecordKind, field: string): string | undefined {
  if (FREE_FORM[kind] !== undefined || kind === 'wire' || field === 'kind') return undefined;
  if (/^(prop|trait)\./.test(field) || (NESTED_FIELDS as readonly string[]).includes(field)) return undefined;
  if ((COMMON_FIELDS as readonly string[]).includes(field) || KIND_FIELDS[kind].includes(field))
    return undefined;
  return `${/^[aei]/.test(kind) ? 'an' : 'a'} ${kind} record has no field "${field}" and takes neither properties nor traits`;
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  ...COMMON_FIELDS,
  ...Object.values(KIND_FIELDS).flat(),
  ...NESTED_FIELDS,
]);

/** Spellings people use for a kind; the canonical names are cli.md's. */
const KIND_ALIASES: Readonly<Record<string, RecordKind>> = { custom: 'event', track: 'event' };

export function parseKind(value: string): RecordKind | undefined {
  const v = value.trim().toLowerCase();
  if ((RECORD_KINDS as readonly string[]).includes(v)) return v as RecordKind;
  return KIND_ALIASES[v];
}

/** How records become events: where each field comes from, and constants for fields a record lacks. */
export interface MappingSpec {
  /** `--kind`: one kind for every record (a `kind` column is then ignored). */
  kind: RecordKind | undefined;
  /** Target field → CSV column name or JSONL dotted path; unmapped fields read their own name. */
  sources: ReadonlyMap<string, string>;
  /** `--set field=value`: used when the record has no value; `{line}` and `{file}` are filled in. */
  defaults: ReadonlyMap<string, string>;
  /** Zone of naive timestamps. */
  tz: string;
}

export type SpecResult = { ok: true; spec: MappingSpec } | { ok: false; error: string };

/** A target is a known field, or `prop.<name>` / `trait.<name>` forcing where a value goes. */
export function isTarget(field: string): boolean {
  if (KNOWN_FIELDS.has(field)) return true;
  return /^(prop|trait)\.[^.].*$/.test(field) && field.length <= 105;
}

function pairs(flag: string, values: readonly string[]): Array<[string, string]> | string {
  const out: Array<[string, string]> = [];
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0 || eq === v.length - 1) {
      // --set takes a value, not a source column (it printed --map's example: found by probing).
      const example =
        flag === '--set'
          ? 'field=value, e.g. --set user_id=demo'
          : `field=source, e.g. ${flag} user=question`;
      return `${flag} "${v}" must look like ${example}`;
    }
    out.push([v.slice(0, eq).trim(), v.slice(eq + 1).trim()]);
  }
  return out;
}

const knownList = () => [...KNOWN_FIELDS].join(', ');

/** Builds the spec from `--mapping` (an object of field → source), then `--map` (which wins), and `--set`. */
export function buildMappingSpec(input: {
  kind?: string | undefined;
  map?: readonly string[] | undefined;
  mappingFile?: { name: string; json: unknown } | undefined;
  set?: readonly string[] | undefined;
  tz: string;
}): SpecResult {
  let kind: RecordKind | undefined;
  if (input.kind !== undefined) {
    kind = parseKind(input.kind);
    if (!kind)
      return { ok: false, error: `--kind must be one of ${RECORD_KINDS.join(', ')}, got "${input.kind}"` };
  }
  const sources = new Map<string, string>();
  const file = input.mappingFile;
  if (file) {
    const { json, name } = file;
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      return { ok: false, error: `--mapping ${name} must hold a JSON object of field → column/path` };
    }
    for (const [field, source] of Object.entries(json)) {
      if (typeof source !== 'string' || source === '') {
        return { ok: false, error: `--mapping ${name}: "${field}" must map to a column name or path` };
      }
      if (!isTarget(field))
        return {
          ok: false,
          error: `--mapping ${name}: unknown field "${field}" (fields: ${knownList()}, prop.<name>, trait.<name>)`,
        };
      sources.set(field, source);
    }
  }
  const mapped = pairs('--map', input.map ?? []);
  if (typeof mapped === 'string') return { ok: false, error: mapped };
  for (const [field, source] of mapped) {
    if (!isTarget(field))
      return {
        ok: false,
        error: `--map: unknown field "${field}" (fields: ${knownList()}, prop.<name>, trait.<name>)`,
      };
    sources.set(field, source);
  }
  const defaults = new Map<string, string>();
  const set = pairs('--set', input.set ?? []);
  if (typeof set === 'string') return { ok: false, error: set };
  for (const [field, value] of set) {
    if (!isTarget(field) || field === 'kind') return { ok: false, error: `--set: unknown field "${field}"` };
    defaults.set(field, value);
  }
  // With one kind for every record, a target it has no place for would refuse every record.
  if (kind !== undefined) {
    const flagOf = (field: string): string =>
      defaults.has(field) && !sources.has(field)
        ? '--set'
        : mapped.some(([f]) => f === field) || !file
          ? '--map'
          : `--mapping ${file.name}`;
    for (const field of new Set([...sources.keys(), ...defaults.keys()])) {
      const why = misplaced(kind, field) ?? unheld(kind, field);
      if (why !== undefined)
        return { ok: false, error: `${flagOf(field)} ${field}: ${why} (--kind ${kind})` };
    }
  }
  return { ok: true, spec: { kind, sources, defaults, tz: input.tz } };
}
