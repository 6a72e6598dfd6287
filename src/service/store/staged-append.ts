import type { DuckDBDataChunk, DuckDBType } from '@duckdb/node-api';
import { appendChunks, type CellValue, chunksOf } from './append.js';
import type { Queryable } from './database.js';

/**
 * Each table's column types as its last appender reported them, so rows can become data chunks
 * before an appender exists. Checked again at every append: chunks built on types that no longer
 * match (another database in the same process, say) are built again.
 */
const knownTypes = new Map<string, readonly DuckDBType[]>();

const sameTypes = (a: readonly DuckDBType[], b: readonly DuckDBType[]): boolean =>
  a.length === b.length && a.every((type, i) => type.toString() === b[i]?.toString());

/**
 * `appendColumns` in two steps. `prepare()` makes the columns and their data chunks: synchronous
 * work that touches no connection, so the caller can do it while DuckDB runs another statement of
 * the transaction on its own threads (`execWhile`). `append()` hands the chunks to an appender,
 * preparing them first if that has not happened. A table's first append in a process prepares at
 * `append()`: its column types are learnt from that appender.
 */
export class StagedAppend {
  private columns: ReadonlyArray<readonly CellValue[]> | undefined;
  private built: { types: readonly DuckDBType[]; chunks: DuckDBDataChunk[] } | undefined;

  constructor(
    readonly table: string,
    private readonly makeColumns: () => ReadonlyArray<readonly CellValue[]>,
  ) {}

  /**
   * Never throws: it runs while a statement of the transaction is in flight, which must be awaited.
   * A row that cannot be built fails again in `append()`, where the transaction handles it.
   */
  prepare(): void {
    const types = knownTypes.get(this.table);
    if (this.built || !types) return;
    try {
      this.built = { types, chunks: [...chunksOf(this.table, types, this.ownColumns())] };
    } catch {
      // Left unbuilt: append() builds the chunks and meets the error there.
    }
  }

  async append(q: Pick<Queryable, 'use'>): Promise<void> {
    const columns = this.ownColumns();
    if ((columns[0]?.length ?? 0) === 0) return;
    await appendChunks(q, this.table, (types) => {
      knownTypes.set(this.table, types);
      return this.built && sameTypes(this.built.types, types)
        ? this.built.chunks
        : chunksOf(this.table, types, columns);
    });
  }

  private ownColumns(): ReadonlyArray<readonly CellValue[]> {
    this.columns ??= this.makeColumns();
    return this.columns;
  }
}
