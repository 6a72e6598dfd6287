import { DB_COLLECTIONS, DB_OPERATORS, type DbCollection, type DbQuery } from '../../shared/db-api.js';
import type { Issue } from '../../shared/errors.js';
import { FORBIDDEN_KEYS } from '../../shared/primitives.js';
import { jsonEquals } from '../charts/property-filter.js';
import { all, any, Params } from '../charts/sql.js';
import { invalidInput } from '../errors.js';

/**
 * The whitelist behind `/db/{collection}/{op}`: per collection, the fields a filter or sort may name
 * and the SQL each stands for (fixed text written here), plus one JSON column whose keys are
 * reachable as `traits.<key>` / `properties.<key>` (the key bound as a JSON pointer). Values are
 * always bound; operators are a closed list. Anything else is a 400 naming the JSON path.
 */

interface CollectionSpec {
  table: string;
  alias: string;
  /** Field → SQL column of a scalar; `kind` says how values compare. */
  fields: Record<string, { sql: string; kind: 'text' | 'time' }>;
  json?: { prefix: string; sql: string };
  /** Always-true tenancy and identity conditions; `$project` is replaced by the bound project. */
  base: string;
  /** The document's columns (default: the row's, the project aside). */
  select?: string;
  order: string;
}

const EVENT_PERSON = `(SELECT ep.primary_id FROM users eu
  JOIN users ep ON ep.project_id = eu.project_id AND ep.user_id = eu.canonical_user_id
  WHERE eu.project_id = e.project_id AND eu.user_id = e.user_id)`;

/**
 * A session's person: the user its row names, or the one that user was merged into (an anonymous
 * device user that identified later). The row keeps the merged user, whom /db/users no longer lists.
 */
const SESSION_PERSON = `coalesce((SELECT su.canonical_user_id FROM users su
  WHERE su.project_id = s.project_id AND su.user_id = s.user_id), s.user_id)`;

export const COLLECTIONS: Record<DbCollection, CollectionSpec> = {
  users: {
    table: 'users',
    alias: 'b',
    fields: {
      user_id: { sql: 'b.user_id', kind: 'text' },
      id: { sql: 'b.primary_id', kind: 'text' },
      created_at: { sql: 'b.created_at', kind: 'time' },
    },
    json: { prefix: 'traits.', sql: 'b.traits' },
    base: 'b.project_id = $project AND b.user_id = b.canonical_user_id',
    order: 'b.created_at, b.user_id',
  },
  events: {
    table: 'events',
    alias: 'e',
    fields: {
      event_id: { sql: 'e.event_id', kind: 'text' },
      event: { sql: 'e.event', kind: 'text' },
      // The person's current primary caller id, as the documents show it (decisions §4), not the
      // stored row's service id (which no document shows, and which a merge leaves behind).
      user_id: { sql: EVENT_PERSON, kind: 'text' },
      session_id: { sql: 'e.session_id', kind: 'text' },
      conversation_id: { sql: 'e.conversation_id', kind: 'text' },
      origin_event_id: { sql: 'e.origin_event_id', kind: 'text' },
      timestamp: { sql: 'e.ts', kind: 'time' },
    },
    json: { prefix: 'properties.', sql: 'e.properties' },
    base: 'e.project_id = $project',
    order: 'e.ts, e.event_id',
  },
  sessions: {
    table: 'sessions',
    alias: 's',
    fields: {
      session_id: { sql: 's.session_id', kind: 'text' },
      user_id: { sql: SESSION_PERSON, kind: 'text' },
      device_id: { sql: 's.device_id', kind: 'text' },
      started_at: { sql: 's.started_at', kind: 'time' },
      ended_at: { sql: 's.ended_at', kind: 'time' },
    },
    json: { prefix: 'attributes.', sql: 's.attributes' },
    base: 's.project_id = $project',
    select: `s.* EXCLUDE (project_id) REPLACE (${SESSION_PERSON} AS user_id)`,
    order: 's.started_at, s.session_id',
  },
  conversations: {
    table: 'conversations',
    alias: 'c',
    fields: {
      conversation_id: { sql: 'c.conversation_id', kind: 'text' },
      session_id: { sql: 'c.session_id', kind: 'text' },
      started_at: { sql: 'c.started_at', kind: 'time' },
      ended_at: { sql: 'c.ended_at', kind: 'time' },
    },
    json: { prefix: 'properties.', sql: 'c.properties' },
    base: 'c.project_id = $project',
    order: 'c.started_at, c.conversation_id',
  },
};

export function collectionOf(name: string): DbCollection {
  if ((DB_COLLECTIONS as readonly string[]).includes(name)) return name as DbCollection;
  throw invalidInput([
    { path: 'collection', message: `"${name}" is not served here; use one of ${DB_COLLECTIONS.join(', ')}` },
  ]);
}

type Value = string | number | boolean;
const isScalar = (v: unknown): v is Value =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
const OPERATORS: ReadonlySet<string> = new Set(DB_OPERATORS);

/** A whitelisted field by its own name: `toString` found Object's, and its SQL was "undefined" (a 500). */
function fieldOf(spec: CollectionSpec, field: string): CollectionSpec['fields'][string] | undefined {
  return Object.hasOwn(spec.fields, field) ? spec.fields[field] : undefined;
}

/** The SQL of a filter, or the issues that refuse it. */
export function compileFilter(
  p: Params,
  spec: CollectionSpec,
  filter: Readonly<Record<string, unknown>>,
): { sql: string; issues: Issue[]; regexes: Array<{ path: string; pattern: string }> } {
  const issues: Issue[] = [];
  const conditions: string[] = [];
  // Checked by the route, against DuckDB's RE2, before the query runs.
  const regexes: Array<{ path: string; pattern: string }> = [];
  for (const [field, raw] of Object.entries(filter)) {
    const path = `filter.${field}`;
    const column = fieldOf(spec, field);
    const jsonKey =
      spec.json && field.startsWith(spec.json.prefix) ? field.slice(spec.json.prefix.length) : undefined;
    if (!column && (jsonKey === undefined || jsonKey === '' || FORBIDDEN_KEYS.has(jsonKey))) {
      const names = [...Object.keys(spec.fields), ...(spec.json ? [`${spec.json.prefix}<key>`] : [])];
      issues.push({ path, message: `unknown field; filter on ${names.join(', ')}` });
      continue;
    }
    const ops: Array<[string, unknown]> =
      raw !== null && typeof raw === 'object' && !Array.isArray(raw)
        ? Object.entries(raw as Record<string, unknown>)
        : [['$eq', raw]];
    for (const [op, value] of ops) {
      const at = `${path}.${op}`;
      if (!OPERATORS.has(op)) {
        issues.push({ path: at, message: `unknown operator; use one of ${DB_OPERATORS.join(' ')}` });
        continue;
      }
      const sql = column
        ? columnCondition(p, column, op, value)
        : jsonCondition(
            p,
            `nullif(json_extract(${spec.json!.sql}, ${p.pointer(jsonKey!)}), 'null')`,
            op,
            value,
          );
      if (typeof sql !== 'string') issues.push({ path: at, message: sql.error });
      else {
        conditions.push(sql);
        if (op === '$regex') regexes.push({ path: at, pattern: String(value) });
      }
    }
  }
  return { sql: all(conditions), issues, regexes };
}

const COMPARE: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };

function listOf(value: unknown): Value[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.length <= 1000 && value.every(isScalar)
    ? value
    : undefined;
}

/** A date or an ISO 8601 time, as TIMESTAMPTZ reads it (its shape: a day that does not exist matches nothing). */
const TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;
const isTime = (v: unknown): boolean => typeof v === 'string' && TIME.test(v);

function columnCondition(
  p: Params,
  column: { sql: string; kind: 'text' | 'time' },
  op: string,
  value: unknown,
): string | { error: string } {
  const bound = (v: Value) =>
    column.kind === 'time' ? `TRY_CAST(${p.bind(String(v))} AS TIMESTAMPTZ)` : `${p.bind(String(v))}`;
  // A time compared with what is not one matched nothing, silently: `{"$gt": 12}` (found by probing).
  const times = op === '$in' || op === '$nin' ? (Array.isArray(value) ? value : []) : [value];
  if (column.kind === 'time' && op !== '$exists' && op !== '$regex' && !times.every(isTime))
    return { error: 'takes ISO 8601 times, e.g. "2025-03-01T00:00:00Z" or "2025-03-01"' };
  if (op === '$exists') {
    if (typeof value !== 'boolean') return { error: 'takes true or false' };
    return `${column.sql} IS ${value ? 'NOT ' : ''}NULL`;
  }
  if (op === '$in' || op === '$nin') {
    const list = listOf(value);
    if (!list) return { error: 'takes a list of 1 to 1000 values' };
    const hit = any(list.map((v) => `${column.sql} = ${bound(v)}`));
    return op === '$in' ? hit : `${column.sql} IS NULL OR NOT (${hit})`;
  }
  if (op === '$regex') {
    if (typeof value !== 'string') return { error: 'takes an RE2 regex string' };
    return `regexp_matches(${column.sql}::VARCHAR, ${p.bind(value)})`;
  }
  if (!isScalar(value)) return { error: 'takes a string, number or boolean' };
  if (op === '$eq') return `${column.sql} = ${bound(value)}`;
  if (op === '$ne') return `${column.sql} IS DISTINCT FROM ${bound(value)}`;
  return `${column.sql} ${COMPARE[op]} ${bound(value)}`;
}

function jsonCondition(p: Params, v: string, op: string, value: unknown): string | { error: string } {
  if (op === '$exists') {
    if (typeof value !== 'boolean') return { error: 'takes true or false' };
    return `${v} IS ${value ? 'NOT ' : ''}NULL`;
  }
  if (op === '$in' || op === '$nin') {
    const list = listOf(value);
    if (!list) return { error: 'takes a list of 1 to 1000 values' };
    const hit = any(list.map((x) => `coalesce(${jsonEquals(p, v, x)}, FALSE)`));
    return op === '$in' ? `${v} IS NOT NULL AND (${hit})` : `${v} IS NULL OR NOT (${hit})`;
  }
  if (op === '$regex') {
    if (typeof value !== 'string') return { error: 'takes an RE2 regex string' };
    return `regexp_matches(${v} ->> '$', ${p.bind(value)})`;
  }
  if (!isScalar(value)) return { error: 'takes a string, number or boolean' };
  if (op === '$eq') return `${v} IS NOT NULL AND coalesce(${jsonEquals(p, v, value)}, FALSE)`;
  if (op === '$ne') return `${v} IS NULL OR NOT coalesce(${jsonEquals(p, v, value)}, FALSE)`;
  if (typeof value !== 'number') return { error: 'compares numbers only on JSON fields' };
  // Numbers only, as charts compare them (decisions §6): a cast made the strings "20" and "NaN" and
  // the boolean true numbers (found by probing).
  return `(json_type(${v}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') AND TRY_CAST(${v} AS DOUBLE) ${COMPARE[op]} ${p.number(value)})`;
}

/** ORDER BY from `{field: 1 | -1}` over whitelisted scalar fields; the collection's order breaks ties. */
export function compileSort(spec: CollectionSpec, sort: DbQuery['sort']): { sql: string; issues: Issue[] } {
  const issues: Issue[] = [];
  const parts: string[] = [];
  for (const [field, dir] of Object.entries(sort ?? {})) {
    const column = fieldOf(spec, field);
    if (!column)
      issues.push({ path: `sort.${field}`, message: `sort on ${Object.keys(spec.fields).join(', ')}` });
    else parts.push(`${column.sql} ${dir === -1 ? 'DESC' : 'ASC'} NULLS LAST`);
  }
  return { sql: [...parts, spec.order].join(', '), issues };
}

/** Keeps (1/true) or drops (0/false) top-level fields, as a document store's projection does. */
export function project(
  doc: Record<string, unknown>,
  projection: DbQuery['projection'],
): Record<string, unknown> {
  const entries = Object.entries(projection ?? {});
  if (entries.length === 0) return doc;
  const keep = entries.filter(([, v]) => v === 1 || v === true).map(([k]) => k);
  if (keep.length > 0)
    return Object.fromEntries(keep.filter((k) => Object.hasOwn(doc, k)).map((k) => [k, doc[k]]));
  const drop = new Set(entries.map(([k]) => k));
  return Object.fromEntries(Object.entries(doc).filter(([k]) => !drop.has(k)));
}

export { Params };
