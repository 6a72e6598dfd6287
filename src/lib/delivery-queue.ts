import { ClientError, HttpError } from '../client/errors.js';
import type { Issue } from '../shared/errors.js';
import { issueIndex } from '../shared/issue-index.js';
import { type ServiceError, serviceError } from './errors.js';
import { eventLabel, type WireObject } from './wire.js';

/**
 * Events waiting in every queue of one client, against one bound (library.md: 10,000 by default),
 * so many sessions together cannot grow memory without bound either.
 */
export class QueueBudget {
  used = 0;
  constructor(readonly max: number) {}
}

export interface BatchLimits {
  events: number;
  bytes: number;
}

/** Well under the service's 2,000 events and 10 MiB per request (decisions §2); a 413 splits anyway. */
export const DEFAULT_BATCH: BatchLimits = { events: 500, bytes: 4 * 1024 * 1024 };

export interface DeliveryQueueOptions {
  /** Posts one batch; throws a ClientError when the service refuses it or cannot be reached. */
  send: (events: readonly WireObject[]) => Promise<void>;
  budget: QueueBudget;
  batch?: BatchLimits;
  /** Every event that will never be stored, once, with the reason. */
  onError: (error: ServiceError, event: WireObject) => void;
  log?: ((line: string) => void) | undefined;
  /** Every event enqueued so far is stored or reported (called as the worker stops). */
  onIdle?: (() => void) | undefined;
}

interface Item {
  event: WireObject;
  bytes: number;
  seq: number;
}

/** 400 and 409 judge the events themselves (decisions §4); 413 the batch's size. */
const REFUSALS: ReadonlySet<number> = new Set([400, 409, 413]);

/**
 * One session's FIFO (spec part 1): calls append and return at once; one worker posts batches in
 * call order, one at a time, so the service sees the session's events in the order they happened.
 * A batch forms from whatever waited while the previous one was in flight: no timer adds latency
 * to a quiet session, and a busy one sends fewer, larger requests.
 */
export class DeliveryQueue {
  private items: Item[] = [];
  private head = 0;
  private enqueued = 0;
  private settled = 0;
  private running = false;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private readonly batch: BatchLimits;

  constructor(private readonly o: DeliveryQueueOptions) {
    this.batch = o.batch ?? DEFAULT_BATCH;
  }

  get pending(): number {
    return this.enqueued - this.settled;
  }

  /** False when the client's bound is reached: the event is dropped and reported, the app never blocks. */
  enqueue(event: WireObject): boolean {
    const budget = this.o.budget;
    if (budget.used >= budget.max) {
      this.o.onError(
        serviceError(
          -1,
          `${eventLabel(event)} (event_id ${event.event_id}) dropped: ${budget.max} events are waiting to be sent`,
        ),
        event,
      );
      return false;
    }
    budget.used++;
    this.items.push({ event, bytes: Buffer.byteLength(JSON.stringify(event)), seq: ++this.enqueued });
    this.start();
    return true;
  }

  /** Resolves once every event enqueued so far is stored or reported as an error. */
  drained(): Promise<void> {
    const seq = this.enqueued;
    if (this.settled >= seq) return Promise.resolve();
    this.start();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  private start(): void {
    if (this.running) return;
    this.running = true;
    // After the caller's current synchronous burst: calls made together go out together.
    setImmediate(() => void this.run());
  }

  private async run(): Promise<void> {
    try {
      while (this.head < this.items.length) {
        const batch = this.take();
        await this.deliver(batch);
        this.settle(batch);
      }
    } finally {
      this.items = this.items.slice(this.head);
      this.head = 0;
      this.running = false;
      if (this.pending === 0) this.o.onIdle?.();
    }
  }

  private take(): Item[] {
    const batch: Item[] = [];
    let bytes = 0;
    while (this.head < this.items.length && batch.length < this.batch.events) {
      const item = this.items[this.head]!;
      if (batch.length > 0 && bytes + item.bytes > this.batch.bytes) break;
      batch.push(item);
      bytes += item.bytes;
      this.head++;
    }
    // Let the sent prefix go now and then, not at every batch: slicing a long queue is O(n).
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  private settle(batch: Item[]): void {
    this.o.budget.used -= batch.length;
    this.settled = batch[batch.length - 1]?.seq ?? this.settled;
    const ready = this.waiters.filter((w) => w.seq <= this.settled);
    this.waiters = this.waiters.filter((w) => w.seq > this.settled);
    for (const w of ready) w.resolve();
  }

  private async deliver(batch: Item[]): Promise<void> {
    try {
      this.o.log?.(`POST /bc/v1/events/queue: ${batch.length} event(s)`);
      await this.o.send(batch.map((i) => i.event));
    } catch (error) {
      if (error instanceof HttpError && REFUSALS.has(error.status) && batch.length > 1) {
        await this.isolate(batch, error);
        return;
      }
      this.fail(batch, error);
    }
  }

  /**
   * A refused batch is all or nothing (decisions §4): the events its issues name are sent again alone
   * (each then fails with its own reason, or passes once judged after its predecessors), the others
   * together, in order; without named events, halves. Retried events keep their ids: no duplicates.
   */
  private async isolate(batch: Item[], error: HttpError): Promise<void> {
    const named = new Set<number>();
    for (const issue of error.issues ?? []) {
      const i = issueIndex(issue.path);
      if (i !== undefined && i < batch.length) named.add(i);
    }
    if (named.size === 0 || error.status === 413) {
      const half = Math.ceil(batch.length / 2);
      await this.deliver(batch.slice(0, half));
      await this.deliver(batch.slice(half));
      return;
    }
    let rest: Item[] = [];
    for (const [i, item] of batch.entries()) {
      if (!named.has(i)) {
        rest.push(item);
        continue;
      }
      if (rest.length > 0) await this.deliver(rest);
      rest = [];
      await this.deliver([item]);
    }
    if (rest.length > 0) await this.deliver(rest);
  }

  private fail(batch: Item[], error: unknown): void {
    const status = error instanceof ClientError ? error.status : -1;
    const cause = error instanceof Error ? error.message : String(error);
    for (const { event } of batch) {
      const issues = error instanceof HttpError && batch.length === 1 ? (error.issues ?? []) : [];
      const detail = issues.length > 0 ? issueText(issues) : cause;
      const what = `${eventLabel(event)} (event_id ${event.event_id})`;
      // No answer is no refusal: a batch committed just before the service died read "not stored",
      // and an app that tracked those events again stored them twice (found by probing).
      const outcome =
        status === -1
          ? `not confirmed: ${detail}; it may have been stored before the answer was lost`
          : `not stored: ${detail}`;
      this.o.log?.(`${what} ${outcome}`);
      this.o.onError(serviceError(status, `${what} ${outcome}`), event);
    }
  }
}

/** The issues of a one-event batch without their `[0]`: `properties.user: required`. */
function issueText(issues: readonly Issue[]): string {
  return issues
    .map((i) => {
      const path = i.path.replace(/^\[\d+\]\.?/, '');
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}
