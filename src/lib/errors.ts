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
