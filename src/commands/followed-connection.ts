import { NetworkError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';

interface Closable {
  client: Client;
  close(): Promise<void>;
}

/**
 * A connection that follows its service when it moves: a `cas serve` found through server.json may be
 * restarted on another port while a long command (an import) runs. A call that fails on the network
 * after its retries asks `refresh` for the service there is now, once for every call failing at the
 * same time, and is made once more there. An import kept retrying the old port and stopped with exit 7
 * while server.json already named the new one, which `cas tail` and the client library followed
 * (found by probing). Events carry their ids, so a batch sent again is stored once.
 */
export class FollowedConnection<C extends Closable> {
  private current: C;
  private refreshing: Promise<C | undefined> | undefined;
  private readonly found: C[] = [];

  constructor(
    first: C,
    /** The service there is now, if it is another one than `used`; undefined when none is. */
    private readonly refresh: (used: C) => Promise<C | undefined>,
  ) {
    this.current = first;
  }

  async call<T>(run: (client: Client) => Promise<T>): Promise<T> {
    const used = this.current;
    try {
      return await run(used.client);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      const next = await this.moved(used);
      if (next === undefined) throw error;
      return run(next.client);
    }
  }

  /** Closes the connections found on the way (not the first one, which its opener closes). */
  async close(): Promise<void> {
    await Promise.all(this.found.map((c) => c.close().catch(() => undefined)));
  }

  private moved(used: C): Promise<C | undefined> {
    // Another call found the new service already.
    if (this.current !== used) return Promise.resolve(this.current);
    this.refreshing ??= this.refresh(used)
      .catch(() => undefined)
      .then((next) => {
        this.refreshing = undefined;
        if (next !== undefined) {
          this.found.push(next);
          this.current = next;
        }
        return next;
      });
    return this.refreshing;
  }
}
