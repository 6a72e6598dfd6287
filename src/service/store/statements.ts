import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBType,
  type DuckDBValue,
  LIST,
  listValue,
  VARCHAR,
} from '@duckdb/node-api';
import type { Queryable } from './database.js';

/** A parameter value as the store's driver takes it (charts and read routes build lists of them). */
export type StoreValue = DuckDBValue;

/** A list parameter whose element type the driver infers from its values (use `texts`/`ints` when a list may start with NULL). */
export const list = (values: readonly StoreValue[]): StoreValue => listValue(values);

/**
 * Typed parameters for batched statements: a whole batch travels as a few list parameters that SQL
 * unnests, one statement per table instead of one per row. Every list carries its type explicitly:
 * the driver infers a list's type from its first element, and a list that starts with NULL would
 * otherwise arrive as all NULLs.
 */
export interface Param {
  value: DuckDBValue;
  type: DuckDBType;
}

export const text = (value: string | null): Param => ({ value, type: VARCHAR });
export const int = (value: number | null): Param => ({
  value: value === null ? null : BigInt(Math.trunc(value)),
  type: BIGINT,
});
export const texts = (values: ReadonlyArray<string | null>): Param => ({
  value: listValue(values),
  type: LIST(VARCHAR),
});
export const ints = (values: ReadonlyArray<number | null>): Param => ({
  value: listValue(values.map((v) => (v === null ? null : BigInt(Math.trunc(v))))),
  type: LIST(BIGINT),
});
export const doubles = (values: ReadonlyArray<number | null>): Param => ({
  value: listValue(values),
  type: LIST(DOUBLE),
});
export const bools = (values: ReadonlyArray<boolean | null>): Param => ({
  value: listValue(values),
  type: LIST(BOOLEAN),
});

function split(params: readonly Param[]): [DuckDBValue[], DuckDBType[]] {
  return [params.map((p) => p.value), params.map((p) => p.type)];
}

export async function exec(q: Queryable, sql: string, params: readonly Param[]): Promise<void> {
  await q.use((c) => c.run(sql, ...split(params)));
}

/**
 * `exec` that runs `meanwhile` (synchronous work) while DuckDB executes the statement on its own
 * thread, so the two overlap instead of one waiting for the other.
 */
export async function execWhile(
  q: Queryable,
  sql: string,
  params: readonly Param[],
  meanwhile: () => void,
): Promise<void> {
  await q.use(async (c) => {
    const prepared = await c.prepare(sql);
    try {
      prepared.bind(...split(params));
      const pending = prepared.run();
      try {
        meanwhile();
      } finally {
        // Even if `meanwhile` throws: the statement must end before it is destroyed.
        await pending;
      }
    } finally {
      prepared.destroySync();
    }
  });
}

export async function rows<T extends Record<string, unknown>>(
  q: Queryable,
  sql: string,
  params: readonly Param[],
): Promise<T[]> {
  const reader = await q.use((c) => c.runAndReadAll(sql, ...split(params)));
  return reader.getRowObjectsJS() as T[];
}

/** The first column of a statement's rows, as one array (a filter's load reads 65,536 at a time). */
export async function column<T>(q: Queryable, sql: string, params: readonly Param[]): Promise<T[]> {
  const reader = await q.use((c) => c.runAndReadAll(sql, ...split(params)));
  return (reader.getColumnsJS()[0] ?? []) as T[];
}

/**
 * `sql` once per chunk of `keys`, for lookups by a list of keys: a few thousand keys per statement
 * keep parameter binding cheap.
 */
export async function rowsByKeys<T extends Record<string, unknown>>(
  q: Queryable,
  keys: readonly string[],
  query: (chunk: readonly string[]) => { sql: string; params: Param[] },
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < keys.length; i += 5000) {
    const { sql, params } = query(keys.slice(i, i + 5000));
    out.push(...(await rows<T>(q, sql, params)));
  }
  return out;
}

/** Epoch ms as TIMESTAMPTZ inside SQL: `make_timestamptz` takes microseconds. */
export const tsFromMs = (expr: string): string => `make_timestamptz(${expr} * 1000)`;
