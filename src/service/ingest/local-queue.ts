import type { WireEvent } from '../../shared/events.js';
import type { Limits } from '../../shared/limits.js';
import type { LocalQueue, ParseLimits } from '../../shared/local-queue.js';
import { resourceFailure, ServiceError } from '../errors.js';
import { oneLineMessage } from '../http/error-reply.js';
import type { Tenants } from '../store/tenants.js';
import type { Ingestor } from './ingestor.js';
import { queueBatch, queueEvents } from './routes.js';

/**
 * The embedded service's queue without HTTP (cli.md: "the embedded service may be reached in-process,
 * provided one ingest core applies the same validation, state rules and answers to both"): the same
 * key check as the route's authentication, then `queueEvents`, the route's own handler body, so the
 * validation (the shared dispatcher over every event, sizes and reserved keys included), the ingest
 * core and the answers are one code path; a batch the sender already parsed with that same
 * validation, under the same limits, skips it here (LocalBatch.parsedUnder). What HTTP adds and this
 * skips: JSON text and its parser, the body and connection limits (they guard a server from remote
 * clients; the caller here is the process that owns the service), and the rate limit, for the same
 * reason.
 */
export function localQueue(
  ingestor: Ingestor,
  tenants: Tenants,
  limits: Limits,
  log: (line: string) => void,
): LocalQueue {
  return async (batch) => {
    const { apiKey, projectId, events, parsedUnder } = batch;
    try {
      const tenant = tenants.authenticate(apiKey, projectId);
      if (tenant === 'forbidden')
        throw new ServiceError(403, 'forbidden', 'the API key is unknown or does not own this project');
      const history = batch.history === true;
      if (parsedUnder && sameLimits(parsedUnder, limits))
        return { status: 200, body: await queueBatch(ingestor, tenant, events as WireEvent[], history) };
      // Not parsed from text by our parser: sizes and reserved keys are checked event by event.
      return { status: 200, body: await queueEvents(ingestor, limits, tenant, events, undefined, history) };
    } catch (error) {
      const known =
        error instanceof ServiceError ? error : (resourceFailure(error, log) ?? internal(error, log));
      const body = known.toBody();
      return { status: known.status, body: { ...body, message: oneLineMessage(body.message) } };
    }
  };
}

/** The sender's parse holds here only if it applied this service's limits (a test may lower them). */
const sameLimits = (under: ParseLimits, limits: Limits): boolean =>
  under.eventsPerRequest === limits.eventsPerRequest && under.eventBytes === limits.eventBytes;

function internal(error: unknown, log: (line: string) => void): ServiceError {
  const e = error instanceof Error ? error : new Error(String(error));
  log(`internal error: ${e.name}: ${e.message.split('\n')[0]}`);
  return new ServiceError(500, 'internal', 'internal error; the service logged it');
}
