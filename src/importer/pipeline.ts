import { tmpdir } from 'node:os';
import { type Checkpoint, MAX_WITNESSES } from './checkpoint.js';
import { type Ack, Delivery, type Refusal } from './delivery.js';
import { ExternalSorter } from './external-sort.js';
import { Frontier } from './frontier.js';
import type { MappingSpec } from './mapping-spec.js';
import { type ReadHelperOptions, readAll } from './read-phase.js';
import { Sessionizer, type SessionizerOptions } from './sessionizer.js';
import type { InputFile } from './sources.js';
import { GROUP } from './staging.js';
import {
  type DroppedField,
  type OutEvent,
  originalRecord,
  type Rejection,
  type SourceRef,
  type WireJson,
} from './types.js';

/** Live counters: the pipeline updates them, progress displays read them. */
export interface ImportStats {
  /** Reading and sorting the input, then sending it in order. */
  phase: 'reading' | 'sending';
  /** When the current phase began (ms since the epoch): rates are measured from it. */
  phaseStartedAt: number;
  /** Records read in this run. */
  records: number;
  /** Records of the sorted run a resume skipped (acknowledged by an earlier run). */
  skipped: number;
  /** Records placed in sessions so far (sending phase), of `staged`. */
  placed: number;
  staged: number;
  /**
   * Records of `staged` whose event the service acknowledged: stored, already stored, or refused
   * (exact duplicates with the copy imported). A dry run counts the records mapped to events.
   */
  acknowledged: number;
  /** Events produced (in a dry run: that would be sent). */
  events: number;
  sent: number;
  accepted: number;
  /** Events the service already had, plus exact duplicate records of the input imported once. */
  duplicates: number;
  /** Exact duplicate records in the input (counted in `duplicates` too). */
  duplicateRecords: number;
  /** Records rejected in the whole import, earlier runs of a resumed one included. */
  rejected: number;
  /** Session ends the import added that the service refused (not records: reported on their own). */
  endsRefused: number;
  batches: number;
  retries: number;
  bytes: number;
  /** CRC-32 of the input's bytes as read, in order: a checkpoint holds it, and a resume compares it. */
  content: number;
  /** Records never read because the run stopped (null: unknown, e.g. stdin). */
  unread: number | null;
}

export const newStats = (): ImportStats => ({
  phase: 'reading',
  phaseStartedAt: Date.now(),
  records: 0,
  skipped: 0,
  placed: 0,
  staged: 0,
  acknowledged: 0,
  events: 0,
  sent: 0,
  accepted: 0,
  duplicates: 0,
  duplicateRecords: 0,
  rejected: 0,
  endsRefused: 0,
  batches: 0,
  retries: 0,
  bytes: 0,
  content: 0,
  unread: 0,
});

export interface CheckpointData {
  /** Records of the sorted run before this index are stored (or rejected for good). */
  position: number;
  /** The input's bytes, as `Resume.content` compares them. */
  content?: string;
  complete: boolean;
  /**
   * Records the service refused before `position` (mapping rejections are found again on resume);
   * on a complete checkpoint, every rejection of the import.
   */
  rejected: number;
  /** On a complete checkpoint: the records the input held (`position` counts only those mapped). */
  records?: number;
  /**
   * The id of the last event of this import the service acknowledged before the checkpoint: a store
   * that lacks it (one restored from an older backup) does not hold what the checkpoint says was
   * imported.
   */
  witness?: string;
  /**
   * Acknowledged events of this import at the 1st, 2nd, 4th, 8th, ... acknowledgment: a store that
   * lacks any of them does not hold what the checkpoint says, though it holds the last one. An
   * overlapping import stored before a backup could hold the last one, and a re-run after restoring
   * that backup skipped the records the backup lacked (found by probing).
   */
  witnesses?: string[];
}

/** What a resumed run takes from its checkpoint. */
export type Resume = Pick<Checkpoint, 'position' | 'rejected' | 'witness' | 'witnesses' | 'content'>;

/**
 * The checkpoint's resume, when its position lies within the sorted run just read; otherwise the run
 * starts from the beginning, saying so (what was stored is not stored twice). A position past the end
 * was trusted, and marked the import complete (found by probing: rows never stored). Its bytes were
 * compared before the run (`inputContent`).
 */
function fitting(o: PipelineOptions, stats: ImportStats): Resume | undefined {
  const resume = o.resume;
  if (resume === undefined || resume.position <= stats.staged) return resume;
  const n = (x: number) => x.toLocaleString('en');
  o.onNote?.(
    `cas: the checkpoint of this input names record ${n(resume.position)} of its sorted records, but it holds ${n(stats.staged)}: importing it from the start; what is stored is not stored twice`,
  );
  return undefined;
}

/**
 * `ImportStats.content` as a checkpoint keeps it: only of an input read to its end (`inputBytes`
 * bytes), as `inputContent` computes it; an input read in part (a gzip member failing its check, an
 * unreadable rest) would never match.
 */
const contentOf = (o: PipelineOptions, stats: ImportStats): string | undefined =>
  o.inputBytes !== undefined && stats.bytes === o.inputBytes
    ? stats.content.toString(16).padStart(8, '0')
    : undefined;

export interface PipelineOptions {
  files: readonly InputFile[];
  spec: MappingSpec;
  session: SessionizerOptions;
  batchSize: number;
  concurrency: number;
  maxErrors: number;
  /** Where a resumed run starts (an index into the sorted run), and its earlier refusals. */
  resume?: Resume | undefined;
  /** The inputs' size in bytes (files only): a checkpoint keeps their content once all are read. */
  inputBytes?: number | undefined;
  /** A line for the user (stderr): a checkpoint set aside, a spill folder moved. */
  onNote?: ((line: string) => void) | undefined;
  /** How events reach the service; absent for a dry run. */
  send?:
    | { send: (events: WireJson[]) => Promise<Ack>; refusal: (error: unknown) => Refusal | undefined }
    | undefined;
  /** Dry run: each event that would be sent. */
  onEvent?: ((event: WireJson) => void) | undefined;
  onReject: (rejection: Rejection) => void;
  /** A field left out of properties (it holds no property value), once per name, with the first record. */
  onDropped?: ((dropped: DroppedField) => void) | undefined;
  /** An end the import added was refused: reported with the record it followed. */
  onEndRefused?: ((source: SourceRef, reason: string) => void) | undefined;
  onCheckpoint?: ((data: CheckpointData) => Promise<void>) | undefined;
  stats: ImportStats;
  signal?: AbortSignal | undefined;
  stdin?: NodeJS.ReadableStream | AsyncIterable<Buffer> | undefined;
  /** Keep original records for the reject file (costs memory and spill space). */
  keepRaw?: boolean | undefined;
  /** Where the sort spills (default: the system's temp folder). */
  tmpDir?: string | undefined;
  /** The importing process, named by its spill folder (see `removeStaleSpills`). */
  owner?: number | undefined;
  /** How often checkpoints are written, at most. */
  checkpointEveryMs?: number | undefined;
  /** A second thread that stages part of a large input while it is read (default: on); false: none. */
  readHelper?: ReadHelperOptions | false | undefined;
}

/** How a run ended: everything sent, Ctrl-C, or too many rejected records. */
export type PipelineEnd = 'complete' | 'interrupted' | 'max-errors';

/** Checking the clock and the signal every 64 records keeps that cheap. */
const GRAIN = 64;

/**
 * read → map → sort → sessionize → batch → send. The whole input is read and sorted (in bounded
 * memory: see ExternalSorter) before anything is sent, so sessions are complete and ordered whatever
 * the order of rows and files. A checkpoint is the index of the sorted run that acknowledgements have
 * passed; a resume reads and sorts the same input again and skips to it.
 */
export async function runPipeline(o: PipelineOptions): Promise<PipelineEnd> {
  const { stats } = o;
  const sorter = new ExternalSorter({
    parent: o.tmpDir,
    owner: o.owner,
    onFallback: (reason) =>
      o.onNote?.(
        `cas: cannot sort in a folder of the data directory (${reason}); sorting in ${tmpdir()} instead`,
      ),
  });
  try {
    const read = await readAll(o, sorter);
    if (read !== 'complete') return read;
    return await sendAll(o, sorter);
  } finally {
    await sorter.dispose();
    stats.phase = 'sending';
  }
}

async function sendAll(o: PipelineOptions, sorter: ExternalSorter): Promise<PipelineEnd> {
  const { stats } = o;
  const resume = fitting(o, stats);
  const content = contentOf(o, stats);
  stats.phase = 'sending';
  stats.phaseStartedAt = Date.now();
  const frontier = new Frontier();
  const every = o.checkpointEveryMs ?? 2000;
  const refusedSeqs: number[] = [];
  let witness = resume?.witness;
  const witnesses = [...(resume?.witnesses ?? [])];
  let acknowledged = 0;
  const before = resume?.rejected ?? 0;
  stats.rejected += before;

  const delivery = o.send
    ? new Delivery({
        batchSize: o.batchSize,
        concurrency: o.concurrency,
        refusal: o.send.refusal,
        signal: o.signal,
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
          // Past --max-errors, a refusal of a batch already in flight is not reported: the event is
          // left unacknowledged, like those never sent, and a resume sends it again.
          if (refusal !== undefined && !e.synthesized && stats.rejected > o.maxErrors) return;
          frontier.settled(e.seq);
          if (!e.synthesized) acknowledge(e);
          if (refusal === undefined) {
            // The latest acknowledged: one write path commits in order, so a store holding it holds
            // everything acknowledged before it, which is all the checkpoint vouches for. The first
            // one passed for any backup taken after the first batch, and the records stored after
            // that backup were skipped as imported. Not an end the import added: a later run may
            // replace it.
            if (!e.synthesized && typeof e.event.event_id === 'string') {
              witness = e.event.event_id;
              acknowledged++;
              const milestone = (acknowledged & (acknowledged - 1)) === 0;
              if (milestone && witnesses.length < MAX_WITNESSES) witnesses.push(witness);
            }
            return;
          }
          if (e.synthesized) {
            stats.endsRefused++;
            o.onEndRefused?.(e.source, `the session end the import added after this record was ${refusal}`);
            return;
          }
          stats.rejected++;
          refusedSeqs.push(e.seq);
          const record = e.raw ? originalRecord(e.raw) : e.event;
          o.onReject({ source: e.source, reason: refusal, record, seq: e.seq });
        },
      })
    : undefined;
  // An exact duplicate dropped by the sessionizer shares the fate of its copy, the record emitted just
  // before it: acknowledged with it, or left unsent with it.
  let lastOwn: OutEvent | undefined;
  let lastOwnDone = false;
  const copies = new Map<OutEvent, number>();
  const acknowledge = (e: OutEvent): void => {
    stats.acknowledged += 1 + (copies.get(e) ?? 0);
    copies.delete(e);
    if (e === lastOwn) lastOwnDone = true;
  };
  const emit = (e: OutEvent): void => {
    stats.events++;
    if (!e.synthesized) {
      lastOwn = e;
      lastOwnDone = false;
      if (!delivery) acknowledge(e);
    }
    if (delivery) {
      frontier.emitted(e.seq);
      delivery.push(e);
    } else {
      o.onEvent?.(e.event);
    }
  };
  const sessionizer = new Sessionizer(o.session, emit, () => {
    stats.duplicates++;
    stats.duplicateRecords++;
    if (lastOwn === undefined || lastOwnDone) stats.acknowledged++;
    else copies.set(lastOwn, (copies.get(lastOwn) ?? 0) + 1);
  });

  let index = 0;
  /**
   * The first record of the sorted run not yet given to the sessionizer. Not `index`, which already
   * counts the record a stopped run broke off at: where no session was open (the run's first record,
   * or the first after the users and aliases), a checkpoint at `index` skipped that record on resume
   * (found by CI: `timeout -s INT 5 cas import` then a re-run stored 119,999 of 120,000 turns).
   */
  let placedTo = resume?.position ?? 0;
  let written = resume?.position ?? -1;
  let lastWrite = Date.now();
  const checkpoint = async (force: boolean, complete = false): Promise<void> => {
    if (!o.onCheckpoint || !delivery) return;
    if (complete) {
      await o.onCheckpoint({
        position: index,
        complete: true,
        ...(content === undefined ? {} : { content }),
        rejected: stats.rejected,
        records: stats.records,
        ...(witness === undefined ? {} : { witness }),
        ...(witnesses.length === 0 ? {} : { witnesses: [...witnesses] }),
      });
      return;
    }
    // Never inside the open session: a resume must start where a session starts.
    const position = frontier.position(sessionizer.openSeq ?? placedTo);
    if (position <= written || (!force && Date.now() - lastWrite < every)) return;
    const rejected = before + refusedSeqs.filter((s) => s < position).length;
    await o.onCheckpoint({
      position,
      complete: false,
      ...(content === undefined ? {} : { content }),
      rejected,
      ...(witness === undefined ? {} : { witness }),
      ...(witnesses.length === 0 ? {} : { witnesses: [...witnesses] }),
    });
    written = position;
    lastWrite = Date.now();
  };

  const idle = setInterval(() => delivery?.flushIdle(), 1000);
  idle.unref();
  const skip = resume?.position ?? 0;
  let identity = true;
  let end: PipelineEnd = 'complete';
  try {
    merge: for await (const batch of sorter.sorted()) {
      for (const s of batch) {
        const i = index++;
        if (i < skip) {
          stats.skipped++;
          placedTo = i + 1;
          continue;
        }
        if (identity && s.g[0] !== GROUP.identity) {
          // Users and aliases are in place before any session names them (see staging.ts).
          identity = false;
          if (delivery && !(await delivery.drain(false))) break merge;
        }
        if (i % GRAIN === 0) {
          if (delivery?.full) await delivery.room();
          if (o.signal?.aborted || stats.rejected > o.maxErrors) break merge;
          await checkpoint(false);
        }
        sessionizer.add(s, i);
        placedTo = i + 1;
        stats.placed++;
      }
    }
    if (o.signal?.aborted) end = 'interrupted';
    else if (stats.rejected > o.maxErrors) end = 'max-errors';
    if (end === 'complete') {
      sessionizer.finish();
      if (delivery && !(await delivery.drain())) end = o.signal?.aborted ? 'interrupted' : 'max-errors';
    }
    if (end !== 'complete') await delivery?.abandon();
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
