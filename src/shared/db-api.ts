import { z } from 'zod';
import { type BracketTypes, countParam, jsonParam, scalarFromText } from './api-params.js';
import { isPlainObject } from './event-properties.js';

/**
 * `/db/{collection}/{op}` as the hosted SDKs call it (`dbGET`), over a whitelist: each collection
 * names the fields a filter, projection or sort may use, and filters take only `$eq $ne $in $nin
 * $gt $gte $lt $lte $regex $exists` (regex: RE2 in DuckDB). Never a raw query. Collections the
 * description lists that have no local meaning (`messages`, `orgkeys`, `organizations`, `apps`) are
 * refused with 400 naming the supported ones.
 */

export const DB_COLLECTIONS = ['users', 'events', 'sessions', 'conversations'] as const;
export type DbCollection = (typeof DB_COLLECTIONS)[number];

export const DB_OPERATORS = [
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$regex',
  '$exists',
] as const;

export const dbParamsSchema = z.object({
  collection: z.string().min(1).max(100),
  op: z.enum(['find', 'findOne']),
});

const jsonObject = z.record(z.string(), z.unknown());

/** A value of a `traits.`/`properties.`/`attributes.` field may be a number or boolean; the others are text. */
const JSON_FIELD = /^(traits|properties|attributes)\./;

function readFilter(filter: unknown): unknown {
  if (!isPlainObject(filter)) return filter;
  const out: Record<string, unknown> = {};
  for (const [field, condition] of Object.entries(filter)) {
    const read = (v: unknown): unknown =>
      typeof v === 'string' && JSON_FIELD.test(field) ? scalarFromText(v) : v;
    if (!isPlainObject(condition)) {
      out[field] = read(condition);
      continue;
    }
    const ops: Record<string, unknown> = {};
    for (const [op, v] of Object.entries(condition)) {
      if (op === '$regex') ops[op] = v;
      else if (op === '$exists') ops[op] = typeof v === 'string' ? scalarFromText(v) : v;
      else ops[op] = Array.isArray(v) ? v.map(read) : read(v);
    }
    out[field] = ops;
  }
  return out;
}

/**
 * `filter`, `sort` and `projection` in bracket form (`filter[traits.plan]=pro`, `sort[created_at]=-1`):
 * ignored, they answered every document unfiltered (found by probing). Sort and projection values are
 * numbers; a filter's values are numbers or booleans only where the field may hold one.
 */
export const dbBracketTypes: BracketTypes = (name, rebuilt) => {
  if (name === 'filter') return readFilter(rebuilt);
  if ((name === 'sort' || name === 'projection') && isPlainObject(rebuilt))
    return Object.fromEntries(
      Object.entries(rebuilt).map(([k, v]) => [k, typeof v === 'string' ? scalarFromText(v) : v]),
    );
  return rebuilt;
};

export const dbQuerySchema = z.object({
  filter: jsonParam(jsonObject.optional()).describe('JSON object: {field: value} or {field: {$op: value}}'),
  projection: jsonParam(z.record(z.string(), z.union([z.literal(0), z.literal(1), z.boolean()])).optional()),
  sort: jsonParam(z.record(z.string(), z.union([z.literal(1), z.literal(-1)])).optional()),
  skip: countParam(0, 10_000_000),
  limit: countParam(100, 1000),
  include: z.string().optional().describe('accepted and ignored: related collections are not joined'),
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
});
export type DbQuery = z.output<typeof dbQuerySchema>;

export const dbResultSchema = z.union([
  z.array(z.record(z.string(), z.unknown())),
  z.record(z.string(), z.unknown()),
  z.null(),
]);

export const importDemoDataSchema = z.object({
  status: z.string(),
  accepted: z.number().describe('events stored now (0 when the demo data was already there)'),
  duplicates: z.number(),
});
