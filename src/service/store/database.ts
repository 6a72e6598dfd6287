import { statSync } from 'node:fs';
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { READ_LIMITS } from '../../shared/read-limits.js';
import { keepLeadingByteOrderMarks } from './driver-strings.js';
import { Lease } from './lease.js';
import { migrate } from './migrations.js';
import { ReadPool, type ReadPoolOptions } from './read-pool.js';
import { skipVacuumUnlessWorth, type TableSizes, tableSizes } from './vacuum-policy.js';

export type Params = DuckDBValue[] | Record<string, DuckDBValue>;
export type Row = Record<string, unknown>;

/**
 * The service's one handle on DuckDB. Writes are serialized through `write()` because a single writer
 * connection with explicit transactions is what makes "200 means committed" simple to reason about;
 * reads use their own connections so a slow chart never waits behind an import batch: charts and read
 * routes lease one from `reads` (a pool with a time budget and a per-tenant cap), and `read` is one
 * more connection kept for statements that take microseconds (validation, start-up loads), so those
 * never queue behind a long chart.
 */
export interface Database {
  readonly path: string;
  /** Runs `fn` inside BEGIN/COMMIT on the writer connection, one at a time; rolls back on throw. */
  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * `write` split at COMMIT: resolves once COMMIT is sent, with `committed` settling when the data is
   * durable (rejecting if it is not), so the caller can prepare the next transaction meanwhile. The
   * next write of any kind starts only after `committed` settles.
   */
  writeUntilCommit<T>(fn: (tx: Queryable) => Promise<T>): Promise<{ value: T; committed: Promise<void> }>;
  /** Short reads (sees committed data only): checks and lookups, never a scan of a project's events. */
  read: Queryable;
  /** The pool of reader connections for charts and read routes (see read-pool.ts). */
  reads: ReadPool;
  /**
   * Reads on the writer connection, for the single writer's own planning: they see what the writer
   * committed. Each waits while a write transaction runs (BEGIN to the end of its COMMIT), so none
   * runs inside another caller's transaction or between the steps of its statements.
   */
  readWritten: Queryable;
  /**
   * The writer connection itself: an identity (identity listeners are keyed by it) and for start-up
   * settings. Statements on it go through `write()` or `readWritten`, which hold its lease.
   */
  readonly writer: DuckDBConnection;
  /**
   * Doubles DuckDB's memory limit, up to `DatabaseOptions.memoryCeiling`: true when it grew. For a
   * write that ran out (the caller tries it again).
   */
  raiseMemoryLimit(): Promise<boolean>;
  close(): Promise<void>;
}

export interface Queryable {
  run(sql: string, params?: Params): Promise<void>;
  all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]>;
  one<T extends Row = Row>(sql: string, params?: Params): Promise<T | undefined>;
  /** Runs `fn` on the connection (statements the methods above do not cover: streams, appenders). */
  use<T>(fn: (connection: DuckDBConnection) => Promise<T>): Promise<T>;
  /** The connection itself, as an identity (use `use` to run anything on it). */
  readonly connection: DuckDBConnection;
}

/** Statements on `connection`; with a `lease`, each holds it (a connection shared by concurrent callers). */
/**
 * The longest statement a reader runs. DuckDB plans a statement before it runs it, and an interrupt
 * (the query budget) does not reach the planner: a chart naming a cohort of 100 terms of 100 regexes
 * each (2.7 MB of SQL) ran 22 s past a 2 s budget, CPU and memory well past the limits, after its
 * caller had gone (found by probing). About 275 bytes a filter: 512 KB is ~1,900 filters, ~2 s of
 * planning on this machine, where the charts people draw are a few KB.
 */
export const MAX_READ_STATEMENT = 512 * 1024;

/** A reader's statement past MAX_READ_STATEMENT: refused before DuckDB sees it. */
export class StatementTooLargeError extends Error {
  constructor(
    readonly length: number,
    readonly max: number,
  ) {
    super(`statement of ${length} characters, past ${max}`);
    this.name = 'StatementTooLargeError';
  }
}

/** The size of the store's write-ahead log: what was written since the last checkpoint (-1: unknown). */
function walBytes(path: string): number {
  try {
    return statSync(`${path}.wal`, { throwIfNoEntry: false })?.size ?? 0;
  } catch {
    return -1;
  }
}

export function queryable(connection: DuckDBConnection, lease?: Lease, maxStatement?: number): Queryable {
  const use = <T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> =>
    lease ? lease.hold(() => fn(connection)) : fn(connection);
  const check = (sql: string): void => {
    if (maxStatement !== undefined && sql.length > maxStatement)
      throw new StatementTooLargeError(sql.length, maxStatement);
  };
  return {
    connection,
    use,
    async run(sql, params) {
      check(sql);
      await use((c) => c.run(sql, params));
    },
    async all<T extends Row>(sql: string, params?: Params) {
      check(sql);
      const reader = await use((c) => c.runAndReadAll(sql, params));
      return reader.getRowObjectsJS() as T[];
    },
    async one<T extends Row>(sql: string, params?: Params) {
      check(sql);
      const reader = await use((c) => c.runAndReadAll(sql, params));
      return reader.getRowObjectsJS()[0] as T | undefined;
    },
  };
}

/**
 * DuckDB's checkpoint_threshold. Rows committed since the last checkpoint stay in memory (DuckDB's
 * IN_MEMORY_TABLE) and in the WAL a crash replays, so the threshold bounds both. Measured over 1M
 * ingested events: 512 MB let a long import grow past 1 GB; 32 MB checkpointed so often that ingest
 * lost 13% and p99 latency doubled; 128 MB keeps most of the speed. (The indexes that made
 * checkpoints costly are gone.)
 */
export const CHECKPOINT_THRESHOLD = '128MB';

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** `'64MB'`, `'1GiB'` (DuckDB's forms) in bytes; undefined for what it is not. */
export function sizeInBytes(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(text);
  const unit = UNITS[(m?.[2] ?? 'b').toLowerCase()];
  return m && unit !== undefined ? Number(m[1]) * unit : undefined;
}

/**
 * The checkpoint threshold under a memory limit: at most half of it. Committed rows wait in memory
 * for the checkpoint, and under the embedded import's 64 MB a 128 MB threshold was never reached by
 * large texts: 50 MB of 54 KB answers filled the memory and every COMMIT after that failed (found by
 * probing; a CHECKPOINT forced then, with the memory full, failed too and invalidated the database).
 */
export function checkpointThreshold(memoryLimit: string | undefined): string {
  const limit = memoryLimit === undefined ? undefined : sizeInBytes(memoryLimit);
  const cap = sizeInBytes(CHECKPOINT_THRESHOLD)!;
  if (limit === undefined || limit / 2 >= cap) return CHECKPOINT_THRESHOLD;
  return `${Math.max(1, Math.floor(limit / 2 / 1e6))}MB`;
}

export interface DatabaseOptions {
  /** DuckDB's `memory_limit` (for example `'128MB'`); DuckDB's own default (80% of RAM) when absent. */
  memoryLimit?: string;
  /**
   * How far `raiseMemoryLimit` may take it (none: the limit is the caller's, `cas serve
   * --memory-limit`). Committed rows wait in memory until a checkpoint, and large texts (each past
   * DuckDB's 4 KB inline strings in its own overflow blocks, up to twice its size) filled the embedded
   * import's 64 MB: every COMMIT after that failed, an import of 500 events of 135 KB stopped at 231
   * (found by probing). A CHECKPOINT then, or at a lower threshold, ran out too and invalidated the
   * database: it rewrites the table's open row group, large texts and all.
   */
  memoryCeiling?: string;
  /** The reader pool; READ_POOL_DEFAULTS for what is absent. */
  readPool?: Partial<ReadPoolOptions>;
}

/** READ_LIMITS (read/read-limits.ts) says why these values. */
export const READ_POOL_DEFAULTS: ReadPoolOptions = {
  connections: READ_LIMITS.readConnections,
  timeoutMs: READ_LIMITS.queryTimeoutMs,
  queueTimeoutMs: 10_000,
  // Above the charts one key may send at once (40, `--chart-burst`), which otherwise got 503 "queue full".
  waitingPerTenant: 64,
};

export async function openDatabase(path: string, options: DatabaseOptions = {}): Promise<Database> {
  keepLeadingByteOrderMarks();
  const instance = await DuckDBInstance.create(
    path,
    options.memoryLimit === undefined ? {} : { memory_limit: options.memoryLimit },
  );
  const writerConnection = await instance.connect();
  const readerConnection = await instance.connect();
  const pool = { ...READ_POOL_DEFAULTS, ...options.readPool };
  const poolConnections: DuckDBConnection[] = [];
  for (let i = 0; i < Math.max(1, Math.trunc(pool.connections)); i++) {
    poolConnections.push(await instance.connect());
  }
  // A lease of the pool may run statements side by side (Promise.all): they take turns.
  const reads = new ReadPool(poolConnections, pool, (c) => queryable(c, new Lease(), MAX_READ_STATEMENT));
  // Transactions hold the writer's lease from BEGIN to the end of COMMIT; their statements run bare.
  const writerLease = new Lease();
  const writer = queryable(writerConnection);
  await migrate(writer);
  await writer.run(`SET checkpoint_threshold = '${checkpointThreshold(options.memoryLimit)}'`);

  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;
  /**
   * The tables' sizes before the first write, taken then so that a command that only reads pays
   * nothing; the close reads the layouts of the tables whose size changed (vacuum-policy.ts). Null:
   * unknown, and the close reads every layout: the read failed, or the store was written before any
   * size could be taken (migrations at open, or a WAL that a process which never closed left and
   * DuckDB replayed: it keeps the WAL until a checkpoint).
   */
  let sizesBefore: TableSizes | null | undefined = walBytes(path) === 0 ? undefined : null;
  /**
   * After each commit: an empty WAL means a checkpoint ran at it (or nothing is written yet), and a
   * checkpoint that vacuums drops deleted rows from the counts, so sizes no longer tell.
   */
  const noteCheckpoint = (): void => {
    if (sizesBefore !== null && walBytes(path) <= 0) sizesBefore = null;
  };

  function writeUntilCommit<T>(
    fn: (tx: Queryable) => Promise<T>,
  ): Promise<{ value: T; committed: Promise<void> }> {
    if (closed) return Promise.reject(new Error('database is closed'));
    const next = tail.then(async () => {
      const release = await writerLease.acquire();
      let value: T;
      try {
        if (sizesBefore === undefined) sizesBefore = await tableSizes(writer).catch(() => null);
        await writer.run('BEGIN TRANSACTION');
        value = await fn(writer);
      } catch (error) {
        await writer.run('ROLLBACK').catch(() => undefined);
        release();
        throw error;
      }
      const committed = writer
        .run('COMMIT')
        .then(noteCheckpoint)
        .catch(async (error: unknown) => {
          await writer.run('ROLLBACK').catch(() => undefined);
          throw error;
        })
        .finally(release);
      return { value, committed };
    });
    tail = next.then(({ committed }) => committed).catch(() => undefined);
    return next;
  }

  let limitBytes = options.memoryLimit === undefined ? undefined : sizeInBytes(options.memoryLimit);
  const ceilingBytes = options.memoryCeiling === undefined ? undefined : sizeInBytes(options.memoryCeiling);
  const read = queryable(readerConnection, new Lease());

  return {
    path,
    writer: writerConnection,
    read,
    async raiseMemoryLimit() {
      if (limitBytes === undefined || ceilingBytes === undefined || limitBytes >= ceilingBytes) return false;
      limitBytes = Math.min(limitBytes * 2, ceilingBytes);
      const limit = `${Math.floor(limitBytes / 1e6)}MB`;
      // Both are the instance's settings, whichever connection sets them.
      await read.run(`SET memory_limit = '${limit}'`);
      await read.run(`SET checkpoint_threshold = '${checkpointThreshold(limit)}'`);
      return true;
    },
    reads,
    readWritten: queryable(writerConnection, writerLease),
    async write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const { value, committed } = await writeUntilCommit(fn);
      await committed;
      return value;
    },
    writeUntilCommit,
    async close() {
      if (closed) return;
      closed = true;
      reads.close();
      await tail;
      // A checkpoint folds the WAL into the file so the next open starts fast and the file is self-contained.
      await writerLease
        .hold(async () => {
          await skipVacuumUnlessWorth(writer, walBytes(path), sizesBefore ?? undefined).catch(() => false);
          await writer.run('CHECKPOINT');
        })
        .catch(() => undefined);
      readerConnection.closeSync();
      for (const c of poolConnections) c.closeSync();
      writerConnection.closeSync();
      instance.closeSync();
    },
  };
}
