/**
 * One holder at a time, in the order asked. DuckDB runs one query at a time per connection, and
 * `@duckdb/node-api` runs a statement with parameters in steps (prepare, start, execute, each a task
 * of its own on the thread pool): a query that starts on the same connection between two steps
 * closes the first one ("Attempting to execute an unsuccessful or closed pending query result").
 * So a connection shared by concurrent callers lets one statement at a time hold it.
 */
export class Lease {
  private last: Promise<void> = Promise.resolve();

  /** Waits for the lease; the function returned gives it back. */
  async acquire(): Promise<() => void> {
    const before = this.last;
    let release: () => void = () => undefined;
    this.last = new Promise<void>((resolve) => {
      release = resolve;
    });
    await before;
    return release;
  }

  /** Runs `fn` holding the lease. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
