import type { QueueResponse } from '../shared/events.js';
import type { LocalQueue } from '../shared/local-queue.js';
import { HttpError, NetworkError } from './errors.js';

const TARGET = { method: 'POST', path: '/bc/v1/events/queue' } as const;

/**
 * `postQueue` for the embedded service reached in-process: the same answers as over HTTP, mapped to
 * the same typed errors (an `HttpError` with the route's status, code and issues for a refusal, so the
 * importer isolates refused events exactly as it does over HTTP). Nothing is retried: a refusal would
 * be refused again, and a service that stops (the only 503 here) does not come back in this process.
 */
export function localQueueSender(
  queue: LocalQueue,
  credentials: { apiKey: string; projectId: string },
): (events: readonly unknown[]) => Promise<QueueResponse> {
  return async (events) => {
    let answer: Awaited<ReturnType<LocalQueue>>;
    try {
      answer = await queue({ ...credentials, events });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new NetworkError(message, undefined, TARGET, error);
    }
    if (answer.status === 200 && 'accepted' in answer.body) return answer.body;
    const body = answer.body as Exclude<typeof answer.body, QueueResponse>;
    throw new HttpError(
      { status: answer.status, message: body.message, code: body.code, issues: body.issues },
      TARGET,
    );
  };
}
