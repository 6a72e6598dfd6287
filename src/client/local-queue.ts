import { type AddedFieldMemo, normalizeBuilt } from '../shared/built-events.js';
import { parseQueueBody, type QueueResponse, type WireEvent } from '../shared/events.js';
import { LIMITS } from '../shared/limits.js';
import type { LocalBatch, LocalQueue, ParseLimits } from '../shared/local-queue.js';
import { HttpError, NetworkError } from './errors.js';
import type { AttemptInfo } from './http-client.js';

const TARGET = { method: 'POST', path: '/bc/v1/events/queue' } as const;

/**
 * `postQueue` for the embedded service reached in-process: the same answers as over HTTP, mapped to
 * the same typed errors (an `HttpError` with the route's status, code and issues for a refusal, so the
 * importer isolates refused events exactly as it does over HTTP). Nothing is retried: a refusal would
 * be refused again, and a service that stops (the only 503 here) does not come back in this process.
 *
 * The batch is validated here, with the queue route's own parser, and crosses parsed: the service's
 * thread is the import's bottleneck while storing, and this thread has time to spare then. A batch
 * that fails crosses as it came, so the refusal (status, message, issues) is the service's own.
 * With `built`, the events are the importer's own, validated when it mapped them: they are only
 * normalized (shared/built-events.ts), which the parser does as well for anything that cannot be.
 */
export function localQueueSender(
  queue: LocalQueue,
  credentials: { apiKey: string; projectId: string },
  options: {
    /** Send the batches as history (the queue route's `?history=true`), as `cas import` does. */
    history?: boolean;
    /** Told of each batch's answer, as the HTTP client tells `-v` of each attempt. */
    onAttempt?: ((info: AttemptInfo) => void) | undefined;
    /** Every event is one `cas import` built and validated (see above). */
    built?: boolean;
  } = {},
): (events: readonly unknown[]) => Promise<QueueResponse> {
  const { history = false, onAttempt, built = false } = options;
  return async (events) => {
    const started = performance.now();
    const report = (status: number, failure?: string): void => {
      if (onAttempt === undefined) return;
      const info: AttemptInfo = {
        ...TARGET,
        attempt: 1,
        status,
        ms: Math.round(performance.now() - started),
      };
      onAttempt(failure === undefined ? info : { ...info, failure });
    };
    let answer: Awaited<ReturnType<LocalQueue>>;
    try {
      const batch = parsedBatch(credentials, events, built);
      answer = await queue(history ? { ...batch, history } : batch);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      report(-1, message);
      throw new NetworkError(message, undefined, TARGET, error);
    }
    if (answer.status === 200 && 'accepted' in answer.body) {
      report(200);
      return answer.body;
    }
    const body = answer.body as Exclude<typeof answer.body, QueueResponse>;
    report(answer.status, body.message);
    throw new HttpError(
      { status: answer.status, message: body.message, code: body.code, issues: body.issues },
      TARGET,
    );
  };
}

const PARSED_UNDER: ParseLimits = {
  eventsPerRequest: LIMITS.eventsPerRequest,
  eventBytes: LIMITS.eventBytes,
};

function parsedBatch(
  credentials: { apiKey: string; projectId: string },
  events: readonly unknown[],
  built: boolean,
): LocalBatch {
  if (built) {
    const normalized = normalizedBatch(events);
    if (normalized !== undefined) return { ...credentials, events: normalized, parsedUnder: PARSED_UNDER };
  }
  const parsed = parseQueueBody(events, PARSED_UNDER);
  if (!parsed.ok) return { ...credentials, events };
  return { ...credentials, events: parsed.events, parsedUnder: PARSED_UNDER };
}

/**
 * The importer's batch as the queue route's parser outputs it: each event normalized, or parsed
 * where that cannot vouch for it; undefined when any event fails, so the batch crosses unparsed.
 */
function normalizedBatch(events: readonly unknown[]): WireEvent[] | undefined {
  if (events.length === 0 || events.length > PARSED_UNDER.eventsPerRequest) return undefined;
  const memo: AddedFieldMemo = new Map();
  const out: WireEvent[] = [];
  for (const event of events) {
    const fast = normalizeBuilt(event, PARSED_UNDER.eventBytes, memo);
    if (fast !== undefined) {
      out.push(fast);
      continue;
    }
    const parsed = parseQueueBody([event], PARSED_UNDER);
    if (!parsed.ok) return undefined;
    out.push(...parsed.events);
  }
  return out;
}
