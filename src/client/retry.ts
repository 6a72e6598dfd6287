import { ClientError, HttpError, NetworkError } from './errors.js';

/** Statuses that say "not now" rather than "not this": the same request may well succeed later. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);
/** Connection failures where the request provably never reached the server. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  retries: number;
  /** Retries may start only within this many ms of the first attempt. */
  retryTimeMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Upper bound of the jitter added to a server-given `Retry-After`. */
  retryAfterJitterMs: number;
  random: () => number;
  /** Failures this client never retries, whatever their status (see ClientOptions.final). */
  final?: ((error: ClientError) => boolean) | undefined;
}

export interface RetryInfo {
  method: string;
  path: string;
  /** The attempt that just failed (1-based). */
  attempt: number;
  delayMs: number;
  /** One line for `-v`: what failed and why it is worth another try. */
  reason: string;
  error: ClientError;
}

/**
 * TLS failures no retry mends: the certificate is not trusted or not the host's, or the endpoint
 * speaks plain HTTP. Retried, a self-signed certificate took five attempts and 13 s to say so (found
 * by probing).
 */
export const TLS_REFUSALS: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/**
 * Whether a failure may be retried. Non-idempotent requests are retried only when the server cannot
 * have acted on them (refused connection, 429), since a reset after sending may mean "done".
 */
export function isRetryable(error: ClientError, idempotent: boolean): boolean {
  if (error instanceof HttpError) {
    return idempotent ? RETRYABLE_STATUSES.has(error.status) : error.status === 429;
  }
  if (error instanceof NetworkError) {
    if (error.code !== undefined && TLS_REFUSALS.has(error.code)) return false;
    return idempotent || (error.code !== undefined && NOT_SENT_CODES.has(error.code));
  }
  return idempotent && error.kind === 'timeout';
}

/** The client's backoff unless a caller sets its own: 1 s doubling to 8 s (see backoffDelay). */
export const DEFAULT_BACKOFF = { baseDelayMs: 1_000, maxDelayMs: 8_000 } as const;

/**
 * Exponential backoff with "equal jitter" (AWS architecture blog): half the ceiling is fixed, half is
 * random. The random half spreads a herd of retrying clients; the fixed half gives the five default
 * attempts a floor of 7.5 s in all, so they outlast a service restart (with full jitter they could
 * all fall inside the first second or two of one).
 */
export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(ceiling / 2 + policy.random() * (ceiling / 2));
}

function describe(error: ClientError): string {
  if (error instanceof HttpError) return `HTTP ${error.status}: ${error.message}`;
  if (error instanceof NetworkError && error.code) return `${error.code}: ${error.message}`;
  return error.message;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the policy runs out. A wait that would end past
 * the budget is not started: the caller learns at once (with the server's `Retry-After`) instead of
 * after sleeping only to give up.
 */
export async function withRetries<T>(
  run: (attempt: number) => Promise<T>,
  options: {
    policy: RetryPolicy;
    idempotent: boolean;
    signal: AbortSignal | undefined;
    onRetry: ((info: RetryInfo) => void) | undefined;
    /** Aborted when the client closes: a wait before the next attempt ends with the last attempt's error. */
    stop?: AbortSignal | undefined;
  },
): Promise<T> {
  const { policy, idempotent, signal, onRetry, stop } = options;
  const deadline = Date.now() + policy.retryTimeMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(attempt);
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      error.attempts = attempt;
      // Not retried for that reason alone: the service may have done it (an answer lost after a write).
      if (!idempotent && !isRetryable(error, false) && isRetryable(error, true)) error.maybeDone = true;
      if (attempt >= policy.retries || !isRetryable(error, idempotent) || policy.final?.(error) === true)
        throw error;
      const retryAfterMs = error instanceof HttpError ? error.retryAfterMs : undefined;
      const delayMs =
        retryAfterMs === undefined
          ? backoffDelay(attempt, policy)
          : retryAfterMs + Math.floor(policy.random() * policy.retryAfterJitterMs);
      // Compare the server's own figure, not the jittered one, so a Retry-After equal to the budget still fits.
      if ((retryAfterMs ?? delayMs) > deadline - Date.now()) throw error;
      onRetry?.({ method: error.method, path: error.path, attempt, delayMs, reason: describe(error), error });
      // Combined only for a wait: most requests never retry, and every combined signal stays
      // registered on the client's long-lived `stop` until collected.
      const waitSignal =
        stop === undefined ? signal : signal === undefined ? stop : AbortSignal.any([signal, stop]);
      try {
        await sleep(delayMs, waitSignal);
      } catch (reason) {
        if (stop?.aborted && !signal?.aborted) throw error;
        throw reason;
      }
    }
  }
}

/**
 * A wait that Ctrl-C can cut short; rejects with the signal's own reason like undici does. With
 * `unref`, the wait does not keep the process alive by itself.
 */
export function sleep(ms: number, signal: AbortSignal | undefined, unref = false): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (unref) timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
