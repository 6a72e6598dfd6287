import type { Limits } from '../../shared/limits.js';

/**
 * Node's timeouts for a listener of the service: the API's port and `--ws-port`'s alike. A client
 * trickling its headers or body gets 408 and its socket closed (`clientErrorHandler`), checked on a
 * timer (`connectionsCheckingInterval`, 30 s unless set: the `--ws-port` listener, built without
 * these, answered a stalled request after 23-31 s, found by probing).
 */
export interface ListenerTimeouts {
  requestTimeout: number;
  headersTimeout: number;
  connectionsCheckingInterval: number;
  /**
   * An idle keep-alive connection is one waiting for its next request's headers, so it is held to
   * that timeout too (at most Node's own 5 s). Fastify's 72 s let 100 idle sockets, a request each
   * and no key, fill the per-address cap that every local client shares (found by probing).
   */
  keepAliveTimeout: number;
}

export function listenerTimeouts(
  limits: Pick<Limits, 'headersTimeoutMs' | 'requestTimeoutMs'>,
): ListenerTimeouts {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: shortest,
    // Often enough that short test timeouts hold.
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(shortest / 4))),
    keepAliveTimeout: Math.min(5_000, limits.headersTimeoutMs),
  };
}
