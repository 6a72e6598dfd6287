/**
 * What one read may cost, each a `cas serve` flag: the reader pool's size, the time a chart or read
 * may run, the points of one chart, and the bytes of one chart or live-events answer. Constants only:
 * `cas serve --help` shows them without loading DuckDB.
 */
export interface ReadLimits {
  readConnections: number;
  queryTimeoutMs: number;
  chartCells: number;
  responseBytes: number;
}

/**
 * Three readers on a two-core machine: two tenants' charts run side by side and a third request still
 * finds a connection. 15 s stays under the CLI's 30 s request timeout, so a chart is refused before
 * the client gives up and asks again (which would run it twice). A retention chart from 2007 by week
 * has 499,500 cells; 100,000 points of about 250 bytes each fit the 16 MiB.
 */
export const READ_LIMITS: ReadLimits = {
  readConnections: 3,
  queryTimeoutMs: 15_000,
  chartCells: 100_000,
  responseBytes: 16 * 1024 * 1024,
};

/**
 * DuckDB's memory for `cas serve` (DuckDB's own default is 80% of RAM: one `in [0..500]` filter took
 * it all). Charts larger than this spill to the data directory's temp files or are refused.
 */
export const SERVE_MEMORY_LIMIT = '1GiB';
