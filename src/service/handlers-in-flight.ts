import type { RouteSpec } from './http/route.js';

/**
 * Route handlers still running. fastify's close() waits for connections, not for handlers: a client
 * that goes away mid-request (an import aborting its requests on Ctrl-C) leaves its handler working
 * on the database, and closing DuckDB under it failed the handler ("database is closed", logged as an
 * internal error) or aborted the whole process from inside the native module. The service closes the
 * database only once these have settled.
 */
export class HandlersInFlight {
  private readonly running = new Set<Promise<unknown>>();

  /** The same routes, each handler counted while it runs. */
  track(routes: ReadonlyArray<RouteSpec>): RouteSpec[] {
    return routes.map((spec) => ({
      ...spec,
      handler: (ctx) => {
        const result = spec.handler(ctx);
        this.running.add(result);
        const done = () => this.running.delete(result);
        result.then(done, done);
        return result;
      },
    }));
  }

  /** The same function, each call counted while it runs (the in-process queue, local-queue.ts). */
  trackCalls<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args) => {
      const result = fn(...args);
      this.running.add(result);
      const done = () => this.running.delete(result);
      result.then(done, done);
      return result;
    };
  }

  /** Resolves once no handler runs (one that starts meanwhile is waited for too). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
