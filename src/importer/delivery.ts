import type { Issue } from '../shared/errors.js';
import { issueIndex } from '../shared/issue-index.js';
import type { OutEvent, WireJson } from './types.js';

export interface Ack {
  /** Absent when the server does not count (the hosted service answers only `{status}`). */
  accepted?: number | undefined;
  duplicates?: number | undefined;
}

export interface DeliveryOptions {
  batchSize: number;
  /**
   * About the most JSON one batch carries (default BATCH_BYTES): 2,000 events of 54 KB made a 108 MB
   * request, one transaction past the embedded service's 64 MB memory (a 500 at COMMIT), and 24,000
   * such events waited in memory (found by probing). Over HTTP the body limit's 413 split them late.
   */
  batchBytes?: number;
  concurrency: number;
  send: (events: WireJson[]) => Promise<Ack>;
  /** Every event ends here exactly once: stored (or already stored), or refused with a reason. */
  settled: (event: OutEvent, refusal: string | undefined) => void;
  onAck: (ack: { accepted: number; duplicates: number }) => void;
  onBatch: () => void;
  /**
   * Whether a send failure refuses the batch's content (400/409/413: decisions §4, all or nothing,
   * issues naming `[i]`), as opposed to a failure of the service or the network, which ends the run.
   */
  refusal: (error: unknown) => Refusal | undefined;
  /** Asked before each request: false stops sending (too many rejections); nothing more is sent. */
  proceed?: () => boolean;
  /** Aborted: nothing more is sent, and every wait returns. */
  signal?: AbortSignal | undefined;
}

export interface Refusal {
  status: number;
  message: string;
  issues: readonly Issue[];
}

/** A batch's bound in JSON (see `batchBytes`): 2,000 typical turns are well under it. */
export const BATCH_BYTES = 4 * 1024 * 1024;

/** The size an event counts for: the small ends the import adds carry none. */
const sizeOf = (e: OutEvent): number => e.bytes ?? 256;

interface Lane {
  buffer: OutEvent[];
  /** The buffer's size (sizeOf). */
  bytes: number;
  /** Where the buffer's last session begins: the events before it are whole sessions. */
  open: number;
  queue: OutEvent[][];
  running: boolean;
}

/** The session an event belongs to; events without one (identify, alias) are each a whole. */
const sessionOf = (e: OutEvent): unknown => e.event.session_id;

/** FNV-1a: cheap, stable across runs and platforms, good enough to spread keys over a few lanes. */
export function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % lanes;
}

/**
 * Batches events into lanes (one per `--concurrency`), each sending one batch at a time, so the
 * events of a session, which share a lane key, are stored in the order they were emitted.
 *
 * A batch ends where a session does, unless one session fills most of it: the importer emits each
 * session whole, and a session sent in one request is stored with its final state at once, where a
 * session cut across two requests (two transactions: a lane's next batch waits for the last one's
 * answer) has its row and its conversations' rows written, then updated.
 *
 * A batch the service refuses for its content is split (by the indexes its issues name, else in
 * halves) until only the refused events are left: a bad event never sinks its batch.
 */
export class Delivery {
  private readonly lanes: Lane[];
  private outstanding = 0;
  private outstandingBytes = 0;
  private readonly batchBytes: number;
  /** Aliases refused for a previous_id not stored yet, with why: sent again once the rest is (`drain`). */
  private deferred: Array<{ event: OutEvent; refusal: Refusal }> = [];
  /** Their size (sizeOf): kept for the final drain, they hold no lane up (`full`). */
  private deferredBytes = 0;
  private failure: unknown;
  private waiters: Array<() => void> = [];

  constructor(private readonly o: DeliveryOptions) {
    this.batchBytes = o.batchBytes ?? BATCH_BYTES;
    this.lanes = Array.from({ length: o.concurrency }, () => ({
      buffer: [],
      bytes: 0,
      open: 0,
      queue: [],
      running: false,
    }));
    o.signal?.addEventListener('abort', () => this.wake(), { once: true });
  }

  push(e: OutEvent): void {
    if (this.failure !== undefined) return;
    const lane = this.lanes[laneOf(e.laneKey, this.lanes.length)]!;
    const session = sessionOf(e);
    const last = lane.buffer[lane.buffer.length - 1];
    if (last === undefined || session !== sessionOf(last)) lane.open = lane.buffer.length;
    lane.buffer.push(e);
    const size = sizeOf(e);
    lane.bytes += size;
    // An event of no session is whole at once.
    if (session === undefined) lane.open = lane.buffer.length;
    this.outstanding++;
    this.outstandingBytes += size;
    // A full batch ends before the session still growing, unless that would send less than half a
    // batch (a session that long will likely fill one alone): then it is cut where the batch is full.
    if (lane.buffer.length >= this.o.batchSize)
      this.enqueue(lane, lane.open >= this.o.batchSize / 2 ? lane.open : undefined);
    else if (lane.bytes >= this.batchBytes) this.enqueue(lane, lane.open > 0 ? lane.open : undefined);
  }

  /** Sends every partly filled batch now (the end of the input, or of its identity records). */
  private flush(): void {
    for (const lane of this.lanes) if (lane.buffer.length > 0) this.enqueue(lane);
  }

  /**
   * Sends the whole sessions of lanes with nothing in flight: an idle lane should not hold events
   * back. The session each one still grows is kept: cut, it would be written twice (see above).
   */
  flushIdle(): void {
    for (const lane of this.lanes) if (!lane.running && lane.open > 0) this.enqueue(lane, lane.open);
  }

  /** More events in flight than memory should hold: the producer ought to wait (see room). */
  get full(): boolean {
    const batches = this.lanes.length * 3;
    // Aliases kept for the final drain wait in no lane: counted, 24,000 of them stopped the run for good.
    return (
      this.outstanding - this.deferred.length >= this.o.batchSize * batches ||
      this.outstandingBytes - this.deferredBytes >= this.batchBytes * batches
    );
  }

  async room(): Promise<void> {
    while (this.failure === undefined && this.full && this.proceeding()) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Drops every event not yet sent (they stay unacknowledged, so the checkpoint stays before them)
   * and waits for the batches in flight: how a run stops early without sending more.
   */
  async abandon(): Promise<void> {
    for (const lane of this.lanes) {
      for (const batch of lane.queue) for (const e of batch) this.forget(e);
      for (const e of lane.buffer) this.forget(e);
      lane.queue = [];
      lane.buffer = [];
      lane.bytes = 0;
      lane.open = 0;
    }
    for (const { event } of this.takeDeferred()) this.forget(event);
    while (this.failure === undefined && this.lanes.some((l) => l.running)) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /**
   * Sends what is left and waits for every lane to finish: true when everything was delivered,
   * false when sending stopped first (too many rejections, or aborted). Never waits on a stopped lane.
   * Not `final` (the identities' drain, before the sessions), aliases still refused for a previous_id
   * no one has are kept for the final drain: a session's own identify (one naming a session_id) is
   * sent with its session, after every alias, and may be what makes it (found by probing).
   */
  async drain(final = true): Promise<boolean> {
    this.flush();
    for (;;) {
      while (this.failure === undefined && this.outstanding > this.deferred.length && this.proceeding()) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.deferred.length === 0 || this.outstanding > this.deferred.length || !this.proceeding()) break;
      if (!(await this.retryDeferred(final))) break;
    }
    return this.outstanding === (final ? 0 : this.deferred.length);
  }

  /** An event no longer waiting to be sent. */
  private forget(e: OutEvent): void {
    this.outstanding--;
    this.outstandingBytes -= sizeOf(e);
  }

  /**
   * The records of one instant (or of none) are sorted by content, and an identify may be dated after
   * an alias of its id: an alias could come before the record that makes its previous_id, and be
   * refused where the same records in another order were stored (found by probing). Such aliases are
   * sent again, in order, once everything before the drain is stored, round after round while a
   * round stores any; what none stores by the final drain is refused with its own reason.
   */
  private async retryDeferred(final: boolean): Promise<boolean> {
    const round = this.takeDeferred();
    for (let i = 0; i < round.length; i += this.o.batchSize) {
      await this.deliver(round.slice(i, i + this.o.batchSize).map((r) => r.event));
    }
    if (this.deferred.length < round.length) return true;
    if (!final || !this.proceeding()) return false;
    for (const { event, refusal } of this.takeDeferred()) this.settle(event, refusalText(refusal));
    return false;
  }

  private takeDeferred(): Array<{ event: OutEvent; refusal: Refusal }> {
    const taken = this.deferred;
    this.deferred = [];
    this.deferredBytes = 0;
    return taken;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Queues the lane's first `count` buffered events (all of them by default) as one batch. */
  private enqueue(lane: Lane, count = lane.buffer.length): void {
    const batch = count === lane.buffer.length ? lane.buffer : lane.buffer.slice(0, count);
    lane.buffer = count === lane.buffer.length ? [] : lane.buffer.slice(count);
    let bytes = 0;
    for (const e of batch) bytes += sizeOf(e);
    lane.bytes -= bytes;
    lane.open = Math.max(0, lane.open - count);
    lane.queue.push(batch);
    if (!lane.running) void this.run(lane);
  }

  private async run(lane: Lane): Promise<void> {
    lane.running = true;
    try {
      for (let batch = lane.queue.shift(); batch && this.failure === undefined; batch = lane.queue.shift()) {
        if (!this.proceeding()) {
          lane.queue.unshift(batch);
          break;
        }
        await this.deliver(batch);
        this.wake();
      }
    } catch (error) {
      this.failure ??= error;
    } finally {
      lane.running = false;
      this.wake();
    }
  }

  private proceeding(): boolean {
    return this.o.signal?.aborted !== true && (this.o.proceed?.() ?? true);
  }

  private async deliver(batch: OutEvent[]): Promise<void> {
    // Stopped part-way through isolating a batch: its events stay unacknowledged, like unsent ones.
    if (!this.proceeding()) return;
    this.o.onBatch();
    try {
      const ack = await this.o.send(batch.map((e) => e.event));
      const duplicates = ack.duplicates ?? 0;
      this.o.onAck({ accepted: ack.accepted ?? batch.length - duplicates, duplicates });
      for (const e of batch) this.settle(e, undefined);
    } catch (error) {
      const refusal = this.o.refusal(error);
      if (!refusal) throw error;
      await this.isolate(batch, refusal);
    }
  }

  private async isolate(batch: OutEvent[], error: Refusal): Promise<void> {
    if (batch.length === 1) {
      const event = batch[0]!;
      if (unknownPrevious(event, error)) {
        this.deferred.push({ event, refusal: error });
        this.deferredBytes += sizeOf(event);
      } else this.settle(event, refusalText(error));
      return;
    }
    const named = new Set<number>();
    for (const issue of error.issues) {
      const i = issueIndex(issue.path);
      if (i !== undefined && i < batch.length) named.add(i);
    }
    if (named.size > 0 && error.status !== 413) {
      // Send the named events alone (each gets its own reason), then the rest together, in order.
      const parts: OutEvent[][] = [];
      let rest: OutEvent[] = [];
      batch.forEach((e, i) => {
        if (named.has(i)) {
          if (rest.length > 0) parts.push(rest);
          parts.push([e]);
          rest = [];
        } else rest.push(e);
      });
      if (rest.length > 0) parts.push(rest);
      for (const part of parts) await this.deliver(part);
      return;
    }
    const half = Math.ceil(batch.length / 2);
    await this.deliver(batch.slice(0, half));
    await this.deliver(batch.slice(half));
  }

  private settle(e: OutEvent, refusal: string | undefined): void {
    this.forget(e);
    this.o.settled(e, refusal);
  }
}

function refusalText(error: Refusal): string {
  const detail = error.issues.map((i) =>
    `${i.path.replace(/^\[\d+\]\.?/, '')}: ${i.message}`.replace(/^: /, ''),
  );
  return `refused by the service (${error.status}): ${detail.join('; ') || error.message}`;
}

/** An alias refused because no user has its previous_id (yet): 409 naming `previous_id`. */
const unknownPrevious = (e: OutEvent, error: Refusal): boolean =>
  e.event.type === 'alias' &&
  error.status === 409 &&
  error.issues.some((i) => /(^|\.)previous_id$/.test(i.path));
