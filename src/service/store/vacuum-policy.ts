import type { Queryable } from './database.js';

/** DuckDB's rows per row group (its default, which the store keeps). */
export const ROW_GROUP_ROWS = 122_880;

/** One table's storage: its row groups, and its rows live. */
export interface TableLayout {
  table: string;
  groups: number;
  live: number;
}

/** Tables under one group's rows (users, projects, keys) may gather this many groups of small writes. */
export const SMALL_TABLE_GROUPS = 32;

/**
 * Whether a table's layout repays letting DuckDB vacuum at a checkpoint: more row groups than its live
 * rows need, past half as many again and 3 more. DuckDB merges two groups into one and three into two
 * where they fit, so a vacuumed table's groups hold over two thirds of a group each on average, within
 * 1.5 times what it needs. Deleted rows count through the live rows: DuckDB reclaims them only by such
 * merges. The setting is the store's, not a table's, so a vacuum one table asks for rewrites any
 * other's tail too: a table under one group's rows, which scans a few more groups at no cost, asks
 * only past SMALL_TABLE_GROUPS.
 */
export function worthVacuuming(t: TableLayout): boolean {
  if (t.live < ROW_GROUP_ROWS) return t.groups > SMALL_TABLE_GROUPS;
  return t.groups > Math.ceil(Math.ceil(t.live / ROW_GROUP_ROWS) * 1.5) + 3;
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
    const stored = await q.one<{ groups: number }>(
      `SELECT count(DISTINCT row_group_id)::DOUBLE AS groups
       FROM pragma_storage_info($1) WHERE column_id = 0 AND segment_type <> 'VALIDITY'`,
      [quoted],
    );
    const live = await q.one<{ n: number }>('SELECT count(*)::DOUBLE AS n FROM query_table($1)', [quoted]);
    layouts.push({ table: name, groups: stored?.groups ?? 0, live: live?.n ?? 0 });
  }
  return layouts;
}

/**
 * Before the checkpoint that closes the store, after any write: DuckDB vacuums at every checkpoint,
 * merging groups wherever three fit in two, and each checkpoint leaves a part-filled group that the
 * next writes do not fill. So an import of a few thousand events into a store of 650k rewrote ~245k
 * rows of events on close (1.1-1.9 s of a 6 s import, found by probing); a tail of 2,400 rows would
 * have done it there, and so would the next command writing one user, had its close let DuckDB
 * vacuum. The close lets it vacuum only where some table's layout repays it; a layout it cannot read
 * is vacuumed. Reading the layouts took 45-75 ms at 650k events and 110-210 ms at 2.17M.
 */
export async function skipVacuumUnlessWorth(q: Queryable, walBytes: number): Promise<boolean> {
  // Nothing written: the checkpoint has nothing to do.
  if (walBytes === 0) return false;
  const worth = await tableLayouts(q).then(
    (layouts) => layouts.some(worthVacuuming),
    () => true,
  );
  if (!worth) await q.run('SET max_vacuum_tasks = 0');
  return !worth;
}
