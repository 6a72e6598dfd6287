import type { ErrorBody, ErrorCode, Issue } from '../shared/errors.js';
import { summarizeIssues } from '../shared/errors.js';
import { causeOf, firstLine, storageProblemOf } from './lock-error.js';
import { isOutOfMemory } from './store/read-pool.js';

/** A failure the service reports to the caller as-is; anything else becomes a generic 500. */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly issues?: Issue[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  toBody(): ErrorBody {
    return {
      status: this.status,
      code: this.code,
      message: this.message,
      ...(this.issues && (this.status === 400 || this.status === 409) ? { issues: this.issues } : {}),
    };
  }
}

/**
 * A refusal that tells a caller something about a secret it guessed (`PUT /orgkeys`: another
 * organization's key, or a revoked one): it spends the address's failed sign-ins, as a wrong key does.
 */
export class SecretProbeError extends ServiceError {}

export function invalidInput(issues: Issue[], prefix = 'invalid input'): ServiceError {
  return new ServiceError(400, 'invalid_input', `${prefix}: ${summarizeIssues(issues)}`, issues);
}

export function notFound(message: string): ServiceError {
  return new ServiceError(404, 'not_found', message);
}

export function conflict(
  code: 'conflict' | 'session_ended' | 'conversation_closed',
  message: string,
  issues?: Issue[],
) {
  return new ServiceError(409, code, message, issues);
}

/**
 * A failure of the service's own storage (disk full, file system gone read-only, permissions changed
 * under it) as 503: the caller's request was fine and nothing of it was stored (the transaction rolled
 * back), so it may be sent again once the machine is fixed. The log line says what DuckDB said; the
 * answer names only the cause, not the server's paths.
 */
export function storageUnavailable(error: unknown, log: (line: string) => void): ServiceError | undefined {
  const problem = storageProblemOf(error);
  if (problem === undefined) return undefined;
  log(`storage failure (${causeOf(problem)}): ${firstLine(error)}`);
  return new ServiceError(
    503,
    'unavailable',
    `the service cannot use its storage: ${causeOf(problem)}; nothing of this request was stored`,
  );
}

/**
 * A write DuckDB had no memory for (its COMMIT too: "failed to pin block", once the service's data
 * fills `--memory-limit`) as 503: the request was fine and nothing of it was stored. It was a 500,
 * "internal error", on every request until a restart (found by probing with a 28 MB limit).
 * Checkpointing to free memory and retrying was tried: under such a limit the CHECKPOINT itself ran
 * out of memory and DuckDB invalidated the database.
 */
export function outOfMemory(error: unknown, log: (line: string) => void): ServiceError | undefined {
  if (!isOutOfMemory(error)) return undefined;
  log(`out of memory: ${firstLine(error)}`);
  return new ServiceError(
    503,
    'unavailable',
    'the service ran out of memory for this request (cas serve --memory-limit sets it); nothing of it was stored',
  );
}

/** What the service reports for a failure of its own resources: storage, then memory. */
export const resourceFailure = (error: unknown, log: (line: string) => void): ServiceError | undefined =>
  storageUnavailable(error, log) ?? outOfMemory(error, log);
