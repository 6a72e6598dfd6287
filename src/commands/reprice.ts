import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { reprice } from '../client/reprice-routes.js';
import { REPRICE_PATH, type RepriceBody, type RepriceResult } from '../shared/reprice.js';
import { isDateOnly } from '../shared/time-bins.js';
import { UsageError } from './errors.js';
import { whenInstant } from './when-flag.js';

export interface RepriceOptions {
  from?: string | undefined;
  to?: string | undefined;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A `--from` / `--to` value as an instant: a YYYY-MM-DD day is that UTC day (and `--to` includes it
 * whole, as in `cas chart`), anything else an ISO 8601 time (without an offset, a UTC one).
 */
function instant(flag: '--from' | '--to', value: string): string {
  if (DAY.test(value)) {
    // Date.parse rolls 2025-02-30 over into March: a day is checked as `cas chart` checks it.
    if (!isDateOnly(value)) throw new UsageError(`${flag} ${value}: not a calendar day`);
    const start = Date.parse(`${value}T00:00:00Z`);
    return new Date(flag === '--to' ? start + 86_400_000 : start).toISOString();
  }
  const instant = whenInstant(value, 'UTC');
  if (instant === undefined) throw new UsageError(`${flag} ${value}: give YYYY-MM-DD or an ISO 8601 time`);
  return new Date(Date.parse(instant)).toISOString();
}

export function repriceBody(options: RepriceOptions): RepriceBody {
  const body: RepriceBody = {};
  if (options.from !== undefined) body.from = instant('--from', options.from);
  if (options.to !== undefined) body.to = instant('--to', options.to);
  if (body.from !== undefined && body.to !== undefined && body.from >= body.to) {
    throw new UsageError(`--to ${options.to}: must be after --from ${options.from}`);
  }
  return body;
}

/** `cas reprice`: the service recomputes stored token costs and conversation summaries with its price table. */
export async function runReprice(options: RepriceOptions, deps: { client: Client }): Promise<RepriceResult> {
  const body = repriceBody(options);
  try {
    return await reprice(deps.client, body);
  } catch (error) {
    // The route is ours: the hosted service's 404 "Not Found" said nothing of why (found by probing).
    if (error instanceof HttpError && error.status === 404 && error.code === undefined) {
      throw new HttpError(
        {
          status: 404,
          message: `this service has no reprice (${REPRICE_PATH} is our extension; the hosted service has none)`,
        },
        { method: 'POST', path: REPRICE_PATH },
      );
    }
    throw error;
  }
}
