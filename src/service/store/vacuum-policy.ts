import type { Queryable } from './database.js';

/** DuckDB's rows per row group (its default, which the store keeps). */
export const ROW_GROUP_ROWS = 122_880;

/** One table's storage: row groups and rows stored (deleted ones included), and rows live. */
export interface TableLayout {
  table: string;
  groups: number;
  rows: number;
  live: number;
}

/**
 * Whether the layout repays letting DuckDB vacuum at a checkpoint: more row groups than its rows need,
 * past half as many again and 3 more (merges stop at groups of just over half a group, so a vacuumed
 * table stays within that), or more than a tenth of its stored rows deleted.
 */
export function worthVacuuming(t: TableLayout): boolean {
  const needed = Math.max(1, Math.ceil(t.live / ROW_GROUP_ROWS));
  if (t.groups > Math.ceil(needed * 1.5) + 3) return true;
  const deleted = t.rows - t.live;
  return deleted > 2048 && deleted * 10 > t.rows;
}

/** The layout of each table of the store's own schema, written rows not yet checkpointed included. */
export async function tableLayouts(q: Queryable): Promise<TableLayout[]> {
  // Both table functions parse their argument as a qualified name: quoted, a dot or space is the name's
  // own (a name holding a double quote cannot be given, and fails the read: none of the store's does).
  const tables = await q.all<{ name: string; quoted: string }>(
    `SELECT table_name AS name, '"' || replace(table_name, '"', '""') || '"' AS quoted FROM duckdb_tables()
     WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name`,
  );
  const layouts: TableLayout[] = [];
  for (const { name, quoted } of tables) {
    // Column 0 of each table is a plain value (no nested segments): its segments count every row once.
    const stored = await q.one<{ groups: number; rows: number }>(
      `SELECT count(DISTINCT row_group_id)::DOUBLE AS groups, coalesce(sum(count), 0)::DOUBLE AS rows
       FROM pragma_storage_info($1) WHERE column_id = 0 AND segment_type <> 'VALIDITY'`,
      [quoted],
    );
    const live = await q.one<{ n: number }>('SELECT count(*)::DOUBLE AS n FROM query_table($1)', [quoted]);
    layouts.push({ table: name, groups: stored?.groups ?? 0, rows: stored?.rows ?? 0, live: live?.n ?? 0 });
  }
  return layouts;
}

/**
 * Writes below this (the WAL's size; ~190 events, at ~340 bytes an event) leave layouts to DuckDB:
 * a tail that small rewrites full groups only where the last three fall short of two by less than it.
 */
export const LAYOUT_CHECK_WAL_BYTES = 64 * 1024;

/**
 * Before the checkpoint that closes the store: DuckDB vacuums at every checkpoint, merging the last
 * row groups whenever three fit in two, and each checkpoint leaves a part-filled group that the next
 * writes do not fill. So an import of a few thousand events into a store of 650k rewrote ~245k rows
 * of events on close (1.1-1.9 s of a 6 s import, found by probing); a tail of 2,400 rows would have
 * done it there. After writes of LAYOUT_CHECK_WAL_BYTES or more, the close lets it vacuum only where
 * some table's layout repays it (reading the layouts took 45-75 ms at 650k events, which a command
 * writing one user need not pay); a layout it cannot read is vacuumed.
 */
export async function skipVacuumUnlessWorth(q: Queryable, walBytes: number): Promise<boolean> {
  if (walBytes < LAYOUT_CHECK_WAL_BYTES) return false;
  const worth = await tableLayouts(q).then(
    (layouts) => layouts.some(worthVacuuming),
    () => true,
  );
  if (!worth) await q.run('SET max_vacuum_tasks = 0');
  return !worth;
}
