import {
  DuckDBDataChunk,
  DuckDBTimestampTZValue,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { Queryable } from './database.js';

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

/**
 * A value for one cell of an appended row, in the store's own terms: text (JSON columns take JSON
 * text), a number, a boolean or null; a timestamp column takes epoch milliseconds.
 */
export type CellValue = string | number | boolean | null;

const timestamp = (ms: number): DuckDBTimestampTZValue => new DuckDBTimestampTZValue(BigInt(ms) * 1000n);

/** The column as DuckDB's appender takes it: timestamps as value objects, BIGINTs as bigints. */
function forColumn(type: DuckDBType, values: readonly CellValue[]): readonly DuckDBValue[] {
  const convert =
    type.typeId === DuckDBTypeId.TIMESTAMP_TZ
      ? timestamp
      : type.typeId === DuckDBTypeId.BIGINT
        ? (n: number) => BigInt(Math.trunc(n))
        : undefined;
  if (convert === undefined) return values;
  // A run of equal values (a batch's received_at, a session's times) shares one converted value.
  let last: number | undefined;
  let lastValue: DuckDBValue = null;
  return values.map((v) => {
    if (v === null) return null;
    if (typeof v !== 'number') throw new Error(`a ${type.toString()} column takes numbers, not ${typeof v}`);
    if (v !== last) {
      last = v;
      lastValue = convert(v);
    }
    return lastValue;
  });
}

/**
 * Inserts rows given column by column, in the table's column order, inside the connection's open
 * transaction (they commit or roll back with it). This is DuckDB's appender, one data chunk per 2,048
 * rows: the fastest way into DuckDB from Node (whole vectors cross the binding, not single values).
 * It lives in the store so that the ingest and identity code stay free of DuckDB (issue 16: a
 * PostgreSQL store follows, where this would be COPY).
 */
export async function appendColumns(
  q: Pick<Queryable, 'use'>,
  table: string,
  columns: ReadonlyArray<readonly CellValue[]>,
): Promise<void> {
  const rowCount = columns[0]?.length ?? 0;
  if (rowCount === 0) return;
  await q.use(async (connection) => {
    const appender = await connection.createAppender(table);
    try {
      const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
      if (types.length !== columns.length) {
        throw new Error(`${table} has ${types.length} columns, ${columns.length} given`);
      }
      const converted = columns.map((column, i) => forColumn(types[i]!, column));
      for (let from = 0; from < rowCount; from += CHUNK_ROWS) {
        const size = Math.min(CHUNK_ROWS, rowCount - from);
        const chunk = DuckDBDataChunk.create(types, size);
        chunk.setColumns(converted.map((column) => column.slice(from, from + size)));
        appender.appendDataChunk(chunk);
      }
    } finally {
      appender.closeSync();
    }
  });
}
