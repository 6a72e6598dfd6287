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

/**
 * A table's identity (a table dropped and made again under its name is another), its rows as DuckDB
 * counts them (deleted ones too, until a checkpoint that vacuums drops them), and its live rows.
 */
export interface TableSize {
  oid: number;
  rows: number;
  live: number;
}

/** Each table's size by name: what the store held before its first write (see `skipVacuumUnlessWorth`). */
export type TableSizes = ReadonlyMap<string, TableSize>;

interface StoreTable extends TableSize {
  name: string;
  /** The name as the table functions parse it (a qualified name). */
  quoted: string;
}

/** The tables of the store's own schema with their sizes: a catalog read and a count each. */
async function storeTables(q: Queryable): Promise<StoreTable[]> {
  // Both table functions parse their argument as a qualified name: quoted, a dot or space is the name's
  // own (a name holding a double quote cannot be given, and fails the read: none of the store's does).
  const tables = await q.all<{ name: string; quoted: string; oid: number; rows: number }>(
    `SELECT table_name AS name, '"' || replace(table_name, '"', '""') || '"' AS quoted,
       table_oid::DOUBLE AS oid, estimated_size::DOUBLE AS rows FROM duckdb_tables()
     WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name`,
  );
  const out: StoreTable[] = [];
  for (const t of tables) {
    const live = await q.one<{ n: number }>('SELECT count(*)::DOUBLE AS n FROM query_table($1)', [t.quoted]);
    out.push({ ...t, live: live?.n ?? 0 });
  }
  return out;
}

/** Each table's size: 15 ms for the whole store at 2.17M events, where its layouts took 110-210 ms. */
export async function tableSizes(q: Queryable): Promise<TableSizes> {
  return new Map((await storeTables(q)).map((t) => [t.name, { oid: t.oid, rows: t.rows, live: t.live }]));
}

/**
 * The layout of each table of the store's own schema, written rows not yet checkpointed included; with
 * `since`, only of the tables whose size differs from it (or that it lacks).
 */
export async function tableLayouts(q: Queryable, since?: TableSizes): Promise<TableLayout[]> {
  const layouts: TableLayout[] = [];
  for (const t of await storeTables(q)) {
    const before = since?.get(t.name);
    if (before !== undefined && before.oid === t.oid && before.rows === t.rows && before.live === t.live)
      continue;
    const stored = await q.one<{ groups: number }>(
      `SELECT count(DISTINCT row_group_id)::DOUBLE AS groups
       FROM pragma_storage_info($1) WHERE column_id = 0 AND segment_type <> 'VALIDITY'`,
      [t.quoted],
    );
    layouts.push({ table: t.name, groups: stored?.groups ?? 0, live: t.live });
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
 * is vacuumed.
 *
 * `since` holds the tables' sizes before this process first wrote, given only where no checkpoint
 * ran since (one that vacuums drops deleted rows from the count, so a table could delete, drop and
 * append back to the same size). A table of the same size then has the layout the last close left
 * (rows are only added by appends, which grow its count, and removed by deletes, which shrink the
 * live one), and that close vacuumed it, found it within its bound, or could not vacuum it (DuckDB
 * does not vacuum a table with an index): its layout is not read again. Reading every layout took
 * 110-210 ms at 2.17M events, paid by each write command, one writing a user included; it grows with
 * the store (`pragma_storage_info` describes every segment of every column, loading blocks to do so),
 * where the sizes are a count each (~15 ms, taken at the first write and again here). Without
 * `since` every layout is read.
 */
export async function skipVacuumUnlessWorth(
  q: Queryable,
  walBytes: number,
  since?: TableSizes,
): Promise<boolean> {
  // Nothing written: the checkpoint has nothing to do.
  if (walBytes === 0) return false;
  const worth = await tableLayouts(q, since).then(
    (layouts) => layouts.some(worthVacuuming),
    () => true,
  );
  if (!worth) await q.run('SET max_vacuum_tasks = 0');
  return !worth;
}
