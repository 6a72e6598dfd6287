import { createHash } from 'node:crypto';
import type { ChartKind } from '../../shared/chart-controls.js';
import type { Database } from '../store/database.js';
import type { ChartScope } from './context.js';

/**
 * The queries drilldown ids refer to. A chart's id per point used to be the whole query in base64:
 * a response grew with filters x points (300 filters over a year by day ran the heap out). Now a
 * point's id is the query's hash plus the point's coordinates, and the query is remembered here once:
 * in memory (an LRU bounded in bytes) and, for the service, in the `drilldown_queries` table (the
 * `rowsPerProject` most recently charted per project: charting a query again renews it, so the ids of
 * a report or dashboard that is run keep working however many other charts are made), so ids survive
 * a restart and work from the next CLI process over the same data directory. Everything is keyed by
 * project: an id carried to another project names nothing there.
 */

export interface StoredQuery {
  kind: ChartKind;
  scope: ChartScope;
  controls: unknown;
}

interface Entry {
  json: string;
  bytes: number;
  /** When the table last heard this query was charted (epoch ms; 0: not by this process). */
  renewed: number;
}

/** A query charted again renews its row at most this often (a write per chart would be too many). */
const RENEW_MS = 60 * 60 * 1000;

export interface DrilldownStoreOptions {
  /** Where queries are kept across restarts; memory only when absent (unit tests, benchmarks). */
  db?: Database;
  log?: (line: string) => void;
  memoryBytes?: number;
  rowsPerProject?: number;
}

/** 128 bits of SHA-256 in base64url: 22 characters. */
const HASH_BYTES = 16;
export const HASH_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export class DrilldownStore {
  private readonly cache = new Map<string, Entry>();
  private bytes = 0;
  private readonly memoryBytes: number;
  private readonly rowsPerProject: number;

  constructor(private readonly options: DrilldownStoreOptions = {}) {
    this.memoryBytes = options.memoryBytes ?? 16 * 1024 * 1024;
    this.rowsPerProject = options.rowsPerProject ?? 10_000;
  }

  /** The hash naming `query` in `project`; the first time, the query is stored in the background. */
  register(project: string, query: StoredQuery): string {
    const json = JSON.stringify({ kind: query.kind, scope: query.scope, controls: query.controls });
    // The project is hashed too, so an id is unknown anywhere but where it was handed out, even
    // where the same query was charted.
    const hash = createHash('sha256')
      .update(`${project}\u0000${json}`)
      .digest()
      .subarray(0, HASH_BYTES)
      .toString('base64url');
    const key = `${project}\u0000${hash}`;
    const entry = this.remember(key, json);
    const now = Date.now();
    if (now - entry.renewed < RENEW_MS) return hash;
    entry.renewed = now;
    const db = this.options.db;
    // A chart does not wait for this write: the id works from memory at once, and from the table
    // once it commits. Ids answered in the last moments before a crash may be lost; the chart can
    // simply be run again.
    void db
      ?.write(async (tx) => {
        // created_at is when the query was last charted: the newest are kept.
        await tx.run(
          'UPDATE drilldown_queries SET created_at = now() WHERE project_id = $1 AND query_hash = $2',
          [project, hash],
        );
        await tx.run(
          `INSERT INTO drilldown_queries SELECT $1, $2, $3::JSON, now()
           WHERE NOT EXISTS (SELECT 1 FROM drilldown_queries WHERE project_id = $1 AND query_hash = $2)`,
          [project, hash, json],
        );
        await tx.run(
          `DELETE FROM drilldown_queries WHERE project_id = $1 AND query_hash NOT IN (
             SELECT query_hash FROM drilldown_queries WHERE project_id = $1
             ORDER BY created_at DESC LIMIT ${Math.max(1, Math.trunc(this.rowsPerProject))})`,
          [project],
        );
      })
      .catch((error: unknown) => {
        this.options.log?.(
          `drilldown query not stored (its ids work until the service stops): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
      });
    return hash;
  }

  /** The query `hash` names in `project`, or undefined when it names none (expired or foreign). */
  async lookup(project: string, hash: string): Promise<StoredQuery | undefined> {
    const key = `${project}\u0000${hash}`;
    let json = this.cache.get(key)?.json;
    if (json === undefined && this.options.db) {
      const row = await this.options.db.read.one<{ query: string }>(
        'SELECT query::VARCHAR AS query FROM drilldown_queries WHERE project_id = $1 AND query_hash = $2 LIMIT 1',
        [project, hash],
      );
      json = row?.query;
    }
    if (json === undefined) return undefined;
    this.remember(key, json);
    return JSON.parse(json) as StoredQuery;
  }

  /** Moves `key` to the young end of the LRU; returns its entry. */
  private remember(key: string, json: string): Entry {
    const known = this.cache.get(key);
    if (known) this.cache.delete(key);
    const entry = known ?? { json, bytes: 2 * (key.length + json.length), renewed: 0 };
    this.cache.set(key, entry);
    if (!known) this.bytes += entry.bytes;
    for (const [oldest, e] of this.cache) {
      if (this.bytes <= this.memoryBytes || oldest === key) break;
      this.cache.delete(oldest);
      this.bytes -= e.bytes;
    }
    return entry;
  }
}
