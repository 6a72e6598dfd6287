import type { DuckDBConnection } from '@duckdb/node-api';
import type { Queryable } from './database.js';

/**
 * The reader connections that charts and read routes run on. DuckDB runs one statement at a time per
 * connection, so with a single reader one tenant's 200-second chart made every other tenant's
 * event-names wait; a pool lets a few run side by side. Fairness: a tenant holds at most
 * `perTenant` connections (one fewer than the pool), so another tenant always finds one, and a freed
 * connection goes to the waiting tenant that holds the fewest. Each lease has a time budget after
 * which its connection is interrupted (DuckDB stops the running statement) and the lease fails.
 */

export interface ReadPoolOptions {
  connections: number;
  /** Milliseconds a lease may run before its statement is interrupted. */
  timeoutMs: number;
  /** Milliseconds a lease may wait for a connection before it is refused as overloaded. */
  queueTimeoutMs: number;
  /** Leases of one tenant that may wait at once; beyond that they are refused at once. */
  waitingPerTenant: number;
}

/** The lease ran past its time budget and was interrupted. */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`query interrupted after ${timeoutMs} ms`);
    this.name = 'QueryTimeoutError';
  }
}

/** The caller went away (its client closed the connection): its statement was interrupted, or never ran. */
export class LeaseAbandonedError extends Error {
  constructor() {
    super('the caller went away; its query was stopped');
    this.name = 'LeaseAbandonedError';
  }
}

/**
 * The statement ran out of DuckDB's memory. `crowded`: other leases ran at some time beside it, and
 * the limit is the instance's, shared by all of them: alone it may well fit (two charts that each
 * fit alone both failed when run at once, with a 400 telling their users to narrow them: found by
 * probing).
 */
export class QueryOutOfMemoryError extends Error {
  constructor(
    readonly crowded: boolean,
    options?: ErrorOptions,
  ) {
    super('query ran out of memory', options);
    this.name = 'QueryOutOfMemoryError';
  }
}

/** DuckDB out of the memory its limit gives it: an allocation, or a block its COMMIT cannot pin. */
const OUT_OF_MEMORY =
  /^(Out of Memory Error|TransactionContext Error: Failed to commit: failed to pin block)/;

export const isOutOfMemory = (error: unknown): boolean =>
  error instanceof Error && OUT_OF_MEMORY.test(error.message);

/** No connection could be had in time (or too many of the tenant's leases wait already). */
export class ReadPoolBusyError extends Error {
  constructor(readonly reason: 'queue full' | 'queue timeout' | 'closed') {
    super(`no reader connection: ${reason}`);
    this.name = 'ReadPoolBusyError';
  }
}

interface Waiter {
  tenant: string;
  grant(connection: DuckDBConnection): void;
  refuse(error: Error): void;
}

export class ReadPool {
  private readonly idle: DuckDBConnection[];
  private readonly active = new Map<string, number>();
  /** The leases running now; each learns whether another ran beside it (QueryOutOfMemoryError). */
  private readonly running = new Set<{ crowded: boolean }>();
  private waiting: Waiter[] = [];
  private closed = false;
  /** The most connections one tenant may hold at once. */
  readonly perTenant: number;

  constructor(
    connections: ReadonlyArray<DuckDBConnection>,
    private readonly options: Omit<ReadPoolOptions, 'connections'>,
    private readonly wrap: (connection: DuckDBConnection) => Queryable,
  ) {
    this.idle = [...connections];
    this.perTenant = Math.max(1, connections.length - 1);
  }

  /**
   * Runs `fn` on one reader connection of the pool for `tenant`, within the time budget. `signal`
   * aborts when nobody waits for the answer any more: a waiting lease leaves the queue and a running
   * one's statement is interrupted, so a client that gives up frees its connection at once rather
   * than after the budget (a reloading dashboard otherwise held the tenant's share of the pool).
   */
  async lease<T>(tenant: string, fn: (q: Queryable) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw new LeaseAbandonedError();
    const connection = await this.acquire(tenant, signal);
    const me = { crowded: this.running.size > 0 };
    for (const other of this.running) other.crowded = true;
    this.running.add(me);
    let expired = false;
    let abandoned = false;
    const timer = setTimeout(() => {
      expired = true;
      connection.interrupt();
    }, this.options.timeoutMs);
    const abandon = () => {
      abandoned = true;
      connection.interrupt();
    };
    signal?.addEventListener('abort', abandon, { once: true });
    const inner = this.wrap(connection);
    const stopped = (): Error | undefined => {
      if (expired) return new QueryTimeoutError(this.options.timeoutMs);
      if (abandoned) return new LeaseAbandonedError();
      return undefined;
    };
    const guard = () => {
      const error = stopped();
      if (error) throw error;
    };
    const q: Queryable = {
      connection,
      run(sql, params) {
        guard();
        return inner.run(sql, params);
      },
      all(sql, params) {
        guard();
        return inner.all(sql, params);
      },
      one(sql, params) {
        guard();
        return inner.one(sql, params);
      },
      use(use) {
        guard();
        return inner.use(use);
      },
    };
    try {
      return await fn(q);
    } catch (error) {
      // The interrupt surfaces as DuckDB's "INTERRUPT Error"; say why it was interrupted.
      const stop = stopped();
      if (stop) throw stop;
      if (isOutOfMemory(error)) throw new QueryOutOfMemoryError(me.crowded, { cause: error });
      throw error;
    } finally {
      this.running.delete(me);
      clearTimeout(timer);
      signal?.removeEventListener('abort', abandon);
      this.release(tenant, connection);
    }
  }

  /** Refuses every waiting lease; running ones finish (the server stops taking requests first). */
  close(): void {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.refuse(new ReadPoolBusyError('closed'));
  }

  private held(tenant: string): number {
    return this.active.get(tenant) ?? 0;
  }

  private take(tenant: string, connection: DuckDBConnection): DuckDBConnection {
    this.active.set(tenant, this.held(tenant) + 1);
    return connection;
  }

  private acquire(tenant: string, signal: AbortSignal | undefined): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new ReadPoolBusyError('closed'));
    const free = this.idle.pop();
    if (free && this.held(tenant) < this.perTenant) return Promise.resolve(this.take(tenant, free));
    if (free) this.idle.push(free);
    if (this.waiting.filter((w) => w.tenant === tenant).length >= this.options.waitingPerTenant) {
      return Promise.reject(new ReadPoolBusyError('queue full'));
    }
    return new Promise((resolve, reject) => {
      const leave = (error: Error) => {
        this.waiting = this.waiting.filter((w) => w !== waiter);
        waiter.refuse(error);
      };
      const timer = setTimeout(
        () => leave(new ReadPoolBusyError('queue timeout')),
        this.options.queueTimeoutMs,
      );
      const abandon = () => leave(new LeaseAbandonedError());
      signal?.addEventListener('abort', abandon, { once: true });
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abandon);
      };
      const waiter: Waiter = {
        tenant,
        grant: (connection) => {
          settle();
          resolve(this.take(tenant, connection));
        },
        refuse: (error) => {
          settle();
          reject(error);
        },
      };
      this.waiting.push(waiter);
    });
  }

  private release(tenant: string, connection: DuckDBConnection): void {
    const n = this.held(tenant) - 1;
    if (n > 0) this.active.set(tenant, n);
    else this.active.delete(tenant);
    // The waiting tenant holding the fewest connections goes first; among equals, the longest waiting.
    let best: Waiter | undefined;
    for (const w of this.waiting) {
      const held = this.held(w.tenant);
      if (held >= this.perTenant) continue;
      if (!best || held < this.held(best.tenant)) best = w;
    }
    if (!best) {
      this.idle.push(connection);
      return;
    }
    this.waiting = this.waiting.filter((w) => w !== best);
    best.grant(connection);
  }
}
