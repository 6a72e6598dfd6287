import type { ServiceError } from './types.js';

export type { ServiceError };

/** A call on a session after `flush()`, or on a client after `close()`. */
export class SessionClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionClosedError';
  }
}

export function serviceError(status: number, message: string): ServiceError {
  return { errored: true, status, message };
}

/**
 * What `client.userIdentify` and `client.userAlias` reject with when the service refuses the call or
 * cannot be reached: the spec's `{errored: true, status, message}` (status -1: no answer), as an
 * Error an app can test with `instanceof`. They rejected with the HTTP client's own classes, which
 * the package does not export (found by probing).
 */
export class ServiceCallError extends Error implements ServiceError {
  readonly errored = true as const;
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceCallError';
  }
}
