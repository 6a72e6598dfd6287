import { ServiceError } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import { type Database, type Queryable, StatementTooLargeError } from '../store/database.js';
import {
  LeaseAbandonedError,
  QueryOutOfMemoryError,
  QueryTimeoutError,
  ReadPoolBusyError,
} from '../store/read-pool.js';

/**
 * Runs a chart or read query for a tenant on the reader pool, and says what went wrong in the terms
 * of decisions §1: a query that ran past its time budget or DuckDB's memory limit is the request's
 * own cost (400 "query too expensive", not worth retrying as is), unless other queries shared the
 * memory it ran out of; no free connection in time, or memory taken by others, is the service being
 * busy (503 with Retry-After, which the client honours).
 */

/** Seconds a refused caller is asked to wait: about one short query's turn on a busy pool. */
const RETRY_AFTER_SECONDS = 2;

const HINT = 'narrow the range, filters or group-bys';

/**
 * `signal` (the route's `signal`) stops the query once its client has closed the connection: nobody
 * would read the answer.
 */
export async function leaseRead<T>(
  db: Database,
  tenant: Scope,
  fn: (q: Queryable) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  try {
    // Fairness is per organization: one key's projects share its share of the pool.
    return await db.reads.lease(tenant.orgId, fn, signal);
  } catch (error) {
    if (error instanceof LeaseAbandonedError) {
      // Nobody reads this answer; 499 is the status logs know for it ("client closed request").
      throw new ServiceError(499, 'unavailable', 'the client closed the connection before the answer');
    }
    if (error instanceof QueryTimeoutError) {
      throw new ServiceError(
        400,
        'invalid_input',
        `query too expensive: it ran past the service's ${error.timeoutMs / 1000} s budget (cas serve --query-timeout); ${HINT}`,
      );
    }
    if (error instanceof StatementTooLargeError) {
      throw new ServiceError(
        400,
        'invalid_input',
        `query too expensive: its SQL would be ${Math.ceil(error.length / 1024)} KB, past the service's ${error.max / 1024} KB (each filter, and each of a named cohort's, adds to it); name fewer filters, or cohorts of fewer terms`,
      );
    }
    if (error instanceof QueryOutOfMemoryError && error.crowded) {
      throw new ServiceError(
        503,
        'unavailable',
        `the service's memory (cas serve --memory-limit) went to the queries running beside this one; retry in ${RETRY_AFTER_SECONDS} s`,
        undefined,
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    }
    if (error instanceof QueryOutOfMemoryError) {
      throw new ServiceError(
        400,
        'invalid_input',
        `query too expensive: it needs more than the service's memory limit (cas serve --memory-limit); ${HINT}`,
      );
    }
    if (error instanceof ReadPoolBusyError) {
      throw new ServiceError(
        503,
        'unavailable',
        `too many queries are waiting for a reader (${error.reason}; cas serve --read-connections); retry in ${RETRY_AFTER_SECONDS} s`,
        undefined,
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    }
    throw error;
  }
}
