import type { ErrorCode, ErrorRecord, Issue } from '../shared/errors.js';

/**
 * What went wrong, coarse enough for the CLI to pick an exit code without string matching:
 * `http` the server answered non-2xx, `network` no answer (refused, reset, DNS), `timeout` no
 * complete answer in time, `validation` a 2xx whose body is not what the route promises.
 */
export type ClientErrorKind = 'http' | 'network' | 'timeout' | 'validation';

/** Where the failure happened; the path carries no secret (the key travels in a header). */
export interface RequestTarget {
  method: string;
  path: string;
}

export abstract class ClientError extends Error {
  abstract readonly kind: ClientErrorKind;
  /** HTTP status, or -1 when no response arrived (spec part 7). */
  abstract readonly status: number;
  readonly method: string;
  readonly path: string;
  /** Attempts made before giving up (1 = no retry); the retry loop raises it as it goes. */
  attempts = 1;
  /**
   * A write that is not safe to repeat failed after it may have reached the service (a lost answer,
   * a 5xx): it was not tried again, and it may have been carried out (retry.ts).
   */
  maybeDone = false;

  constructor(message: string, target: RequestTarget, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.method = target.method;
    this.path = target.path;
  }

  /** The spec's `{errored, status, message}` record, the shape every caller reports failures in. */
  toRecord(): ErrorRecord {
    return { errored: true, status: this.status, message: this.message };
  }
}

export interface HttpErrorDetails {
  status: number;
  message: string;
  code?: ErrorCode | undefined;
  issues?: Issue[] | undefined;
  /** From `Retry-After`, in milliseconds from when the response arrived. */
  retryAfterMs?: number | undefined;
}

export class HttpError extends ClientError {
  readonly kind = 'http';
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly issues: Issue[] | undefined;
  /** The server's `Retry-After`: exact for the retry loop, whole seconds (rounded up) for people. */
  readonly retryAfterMs: number | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(details: HttpErrorDetails, target: RequestTarget) {
    const seconds = details.retryAfterMs === undefined ? undefined : Math.ceil(details.retryAfterMs / 1000);
    // The server's own words come first; the retry hint is what a person needs to act on a 429/503,
    // unless those words gave it already (ours: "retry in 1 s"). Only where the client retries: a
    // 400 carrying Retry-After said "try again in 1 s" of what would fail again (found by probing).
    const retried = details.status === 408 || details.status === 429 || details.status >= 500;
    const hinted = seconds === undefined || !retried || /\b(retry|try again) in \d/.test(details.message);
    super(hinted ? details.message : `${details.message} (try again in ${seconds} s)`, target);
    this.status = details.status;
    this.code = details.code;
    this.issues = details.issues;
    this.retryAfterMs = details.retryAfterMs;
    this.retryAfterSeconds = seconds;
  }
}

export class NetworkError extends ClientError {
  readonly kind = 'network';
  readonly status = -1;
  /** System or undici error code (ECONNREFUSED, UND_ERR_SOCKET, ...), when there is one. */
  readonly code: string | undefined;

  constructor(message: string, code: string | undefined, target: RequestTarget, cause: unknown) {
    super(message, target, { cause });
    this.code = code;
  }
}

export class TimeoutError extends ClientError {
  readonly kind = 'timeout';
  readonly status = -1;
  readonly timeoutMs: number;

  constructor(timeoutMs: number, target: RequestTarget, cause?: unknown) {
    super(`no complete response within ${timeoutMs} ms`, target, { cause });
    this.timeoutMs = timeoutMs;
  }
}

export class ResponseValidationError extends ClientError {
  readonly kind = 'validation';
  /** The 2xx status the malformed body came with. */
  readonly status: number;
  readonly issues: Issue[];

  constructor(status: number, message: string, issues: Issue[], target: RequestTarget) {
    super(message, target);
    this.status = status;
    this.issues = issues;
  }
}

export function isClientError(error: unknown): error is ClientError {
  return error instanceof ClientError;
}

/** V8 could not reserve a WebAssembly instance's memory (its guard regions need ~10 GB of address space). */
export function isWasmMemoryFailure(error: unknown): boolean {
  return error instanceof RangeError && /^WebAssembly\.\w+\(\): Out of memory/.test(error.message);
}
