import type { ErrorBody } from './errors.js';
import type { QueueResponse } from './events.js';

/**
 * The in-process queue's wire types (cli.md: the embedded service may be reached in-process): the
 * events as the queue route receives them once parsed, and its answer as a value, the status and body
 * the HTTP layer would send. Both are structured-clonable, so they cross between threads as they are.
 */
export interface LocalBatch {
  apiKey: string;
  projectId: string;
  events: readonly unknown[];
}

export type LocalAnswer = { status: 200; body: QueueResponse } | { status: number; body: ErrorBody };

export type LocalQueue = (batch: LocalBatch) => Promise<LocalAnswer>;
