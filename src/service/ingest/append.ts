import { DuckDBDataChunk, DuckDBTimestampTZValue, type DuckDBValue } from '@duckdb/node-api';
import type { Queryable } from '../store/database.js';

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

export const timestamp = (ms: number): DuckDBTimestampTZValue =>
  new DuckDBTimestampTZValue(BigInt(ms) * 1000n);

/**
 * Inserts rows given column by column through the appender, one data chunk per 2,048 rows: the
 * fastest way into DuckDB from Node (whole vectors cross the binding, not single values), and it
 * joins the connection's open transaction, so the rows commit or roll back with the batch.
 */
export async function appendColumns(
  q: Pick<Queryable, 'use'>,
  table: string,
  columns: readonly DuckDBValue[][],
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
      for (let from = 0; from < rowCount; from += CHUNK_ROWS) {
        const size = Math.min(CHUNK_ROWS, rowCount - from);
        const chunk = DuckDBDataChunk.create(types, size);
        chunk.setColumns(columns.map((column) => column.slice(from, from + size)));
        appender.appendDataChunk(chunk);
      }
    } finally {
      appender.closeSync();
    }
  });
}
