import type { ErrorRecord } from '../shared/errors.js';

/**
 * What `getErrors()` lists and `onError` receives (spec part 7): `status` is the HTTP status, or -1
 * when no answer came (network, time-out, an event dropped from a full queue).
 */
export type ServiceError = ErrorRecord & { errored: true };

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
