import { type Ack, Delivery, type Refusal } from './delivery.js';
import { Frontier, type Snapshot, SnapshotQueue } from './frontier.js';
import { mapRecord } from './mapper.js';
import type { MappingSpec } from './mapping-spec.js';
import { planAccess } from './record-access.js';
import type { SessionState } from './session-state.js';
import { Sessionizer } from './sessionizer.js';
import { type InputFile, readInputs } from './sources.js';
import { type OutEvent, originalRecord, type Rejection, type WireJson } from './types.js';

/** Live counters: the pipeline updates them, progress displays read them. */
export interface ImportStats {
  /** Records read in this run (a resume's skipped records are not read). */
  records: number;
  skipped: number;
  /** Events produced (in a dry run: that would be sent). */
  events: number;
  sent: number;
  accepted: number;
  duplicates: number;
  /** Records rejected in the whole import, earlier runs of a resumed one included. */
  rejected: number;
  batches: number;
  retries: number;
  bytes: number;
  openSessions: number;
}

export const newStats = (): ImportStats => ({
  records: 0,
  skipped: 0,
  events: 0,
  sent: 0,
  accepted: 0,
  duplicates: 0,
  rejected: 0,
  batches: 0,
  retries: 0,
  bytes: 0,
  openSessions: 0,
});

export interface CheckpointData {
  position: number;
  complete: boolean;
  rejected: number;
  state: SessionState;
}

export interface PipelineOptions {
  files: readonly InputFile[];
  spec: MappingSpec;
  gapMs: number;
  noEnd: boolean;
  batchSize: number;
  concurrency: number;
  maxErrors: number;
  /** Where a resumed run starts: position, the sessionizer's state there, rejections before it. */
  resume?: CheckpointData | undefined;
  /** How events reach the service; absent for a dry run. */
  send?:
    | { send: (events: WireJson[]) => Promise<Ack>; refusal: (error: unknown) => Refusal | undefined }
    | undefined;
  /** Dry run: each event that would be sent. */
  onEvent?: ((event: WireJson) => void) | undefined;
  onReject: (rejection: Rejection) => void;
  onCheckpoint?: ((data: CheckpointData) => Promise<void>) | undefined;
  stats: ImportStats;
  signal?: AbortSignal | undefined;
  stdin?: NodeJS.ReadableStream | undefined;
  /** How often checkpoints are written and snapshots taken, at most. */
  checkpointEveryMs?: number | undefined;
}

/** Snapshots may start at any record; checking the clock every 64 records keeps that cheap. */
const SNAPSHOT_GRAIN = 64;

/** How a run ended: everything read, Ctrl-C, or too many rejected records. */
export type PipelineEnd = 'complete' | 'interrupted' | 'max-errors';

/**
 * read → map → sessionize → batch → send, with checkpoints. A checkpoint is written only for a
 * position the acknowledgements have passed (see Frontier), holding the sessionizer's state there,
 * so a resume regenerates exactly the events that may not be stored yet, with the same ids.
 */
export async function runPipeline(o: PipelineOptions): Promise<PipelineEnd> {
  const { stats } = o;
  const plan = planAccess(o.spec);
  const frontier = new Frontier();
  const snapshots = new SnapshotQueue();
  const every = o.checkpointEveryMs ?? 2000;
  const rejectionSeqs: number[] = [];
  const before = o.resume?.rejected ?? 0;
  stats.rejected = before;

  const reject = (r: Rejection): void => {
    stats.rejected++;
    rejectionSeqs.push(r.seq);
    o.onReject(r);
  };
  const delivery = o.send
    ? new Delivery({
        batchSize: o.batchSize,
        concurrency: o.concurrency,
        refusal: o.send.refusal,
        send: (events) => {
          stats.sent += events.length;
          return o.send!.send(events);
        },
        onBatch: () => stats.batches++,
        proceed: () => stats.rejected <= o.maxErrors,
        onAck: (ack) => {
          stats.accepted += ack.accepted;
          stats.duplicates += ack.duplicates;
        },
        settled: (e, refusal) => {
          frontier.settled(e.seq);
          if (refusal !== undefined) {
            const record = e.raw ? originalRecord(e.raw) : e.event;
            reject({ source: e.source, reason: refusal, record, seq: e.seq });
          }
        },
      })
    : undefined;
  const emit = (e: OutEvent): void => {
    stats.events++;
    if (delivery) {
      frontier.emitted(e.seq);
      delivery.push(e);
    } else {
      o.onEvent?.(e.event);
    }
  };
  const sessionizer = new Sessionizer({ gapMs: o.gapMs, noEnd: o.noEnd }, emit, o.resume?.state);

  let next = o.resume?.position ?? 0;
  let latest: Snapshot | undefined;
  let written = o.resume?.position ?? -1;
  let lastWrite = Date.now();
  let lastSnapshot = 0;
  const checkpoint = async (force: boolean, complete = false): Promise<void> => {
    if (!o.onCheckpoint || !delivery) return;
    if (complete) {
      const state = { watermark: null, sessions: [] };
      await o.onCheckpoint({ position: next, complete: true, rejected: stats.rejected, state });
      return;
    }
    latest = snapshots.takeUpTo(frontier.position(next)) ?? latest;
    if (!latest || latest.position <= written || (!force && Date.now() - lastWrite < every)) return;
    const position = latest.position;
    const rejected = before + rejectionSeqs.filter((s) => s < position).length;
    await o.onCheckpoint({ position, complete: false, rejected, state: latest.state });
    written = position;
    lastWrite = Date.now();
  };

  const idle = setInterval(() => delivery?.flushIdle(), 1000);
  idle.unref();
  let end: PipelineEnd = 'complete';
  try {
    const onBytes = (n: number) => {
      stats.bytes += n;
    };
    const skip = o.resume?.position ?? 0;
    reading: for await (const batch of readInputs(o.files, { skip, onBytes, stdin: o.stdin })) {
      for (const item of batch.items) {
        const ordinal = item.ok ? item.record.ordinal : item.bad.ordinal;
        if (ordinal % SNAPSHOT_GRAIN === 0 && delivery) {
          // Wait within a chunk too: memory stays bounded, and snapshots follow the acknowledgements.
          if (delivery.full) {
            await delivery.room();
            await checkpoint(false);
          }
          if (o.signal?.aborted) {
            end = 'interrupted';
            next = ordinal;
            break reading;
          }
          if (Date.now() - lastSnapshot >= every / 2) {
            // Taken before the record (and before this ordinal's scan), as a resume will start there.
            snapshots.add({ position: ordinal, state: sessionizer.snapshot() });
            lastSnapshot = Date.now();
          }
        }
        sessionizer.advance(ordinal);
        stats.records++;
        if (!item.ok) {
          const { bad } = item;
          reject({ source: bad.source, reason: bad.reason, record: bad.text, seq: ordinal });
        } else {
          const mapped = mapRecord(item.record, plan);
          if (mapped.ok) sessionizer.add(mapped.mapped);
          else
            reject({
              source: item.record.source,
              reason: mapped.reason,
              record: originalRecord(item.record.value),
              seq: ordinal,
            });
        }
        if (stats.rejected > o.maxErrors) {
          end = 'max-errors';
          next = ordinal + 1;
          break reading;
        }
      }
      next = batch.next;
      stats.skipped = Math.min(skip, next);
      stats.openSessions = sessionizer.openSessions;
      await delivery?.room();
      await checkpoint(false);
      if (stats.rejected > o.maxErrors) {
        end = 'max-errors';
        break;
      }
      if (o.signal?.aborted) {
        end = 'interrupted';
        break;
      }
    }
    if (end === 'complete') sessionizer.finish(next);
    stats.openSessions = sessionizer.openSessions;
    if (end === 'complete') await delivery?.drain();
    else await delivery?.abandon();
    await checkpoint(true, end === 'complete');
    return end;
  } catch (error) {
    // Whatever stopped the run, what is acknowledged so far is kept for the next one.
    await checkpoint(true).catch(() => undefined);
    if (o.signal?.aborted) return 'interrupted';
    throw error;
  } finally {
    clearInterval(idle);
  }
}
