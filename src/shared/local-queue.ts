import type { ErrorBody } from './errors.js';
import type { QueueResponse } from './events.js';
import type { Limits } from './limits.js';

/** The limits a queue body's parse depends on. */
export type ParseLimits = Pick<Limits, 'eventsPerRequest' | 'eventBytes'>;

/**
 * The in-process queue's wire types (cli.md: the embedded service may be reached in-process): the
 * events as the queue route receives them once parsed, and its answer as a value, the status and body
 * the HTTP layer would send. Both are structured-clonable, so they cross between threads as they are.
 */
export interface LocalBatch {
  apiKey: string;
  projectId: string;
  events: readonly unknown[];
  /**
   * Set when the sender already ran the queue route's own validation (`parseQueueBody`, the shared
   * dispatcher) under these per-event and per-request limits, and `events` is its output: the
   * service then skips its pass unless its limits differ. The sender is the process that owns the
   * service, so this moves the work to the sender's thread; it trusts no one new.
   */
  parsedUnder?: ParseLimits;
  /** The queue route's `?history=true` (IngestOptions.history): `cas import` sends history. */
  history?: boolean;
}

export type LocalAnswer = { status: 200; body: QueueResponse } | { status: number; body: ErrorBody };

export type LocalQueue = (batch: LocalBatch) => Promise<LocalAnswer>;
