import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { crc32 } from 'node:zlib';
import { abortable } from './abortable.js';
import type { ExternalSorter } from './external-sort.js';
import type { PipelineEnd, PipelineOptions } from './pipeline.js';
import { readMapped } from './presets/inputs.js';
import { helperEntry, ReadHelper } from './read-helper.js';
import { type AccessPlan, planAccess } from './record-access.js';
import { readInputs } from './sources.js';
import { type StagedBatch, stageBatch } from './stage-batch.js';
import { stage } from './staging.js';
import type { Rejection } from './types.js';

/** When the read helper starts: inputs this large (known sizes, or bytes read so far) repay its start. */
export const HELPER_AFTER_BYTES = 16 * 1024 * 1024;

export interface ReadHelperOptions {
  /** The helper's built entry (default: beside this module, when present). */
  entry?: URL | undefined;
  /** Input bytes from which a helper is worth starting. */
  afterBytes?: number | undefined;
  /**
   * Wait for the helper to load before reading on (tests: a loaded machine could otherwise read a
   * small input whole before the helper is up, and the helper would take no part).
   */
  awaitReady?: boolean | undefined;
  /** Called once the reading is done, with how many batches the helper staged. */
  onDone?: ((batches: number) => void) | undefined;
}

/** What is left of the input when a run stops: batches of records, some pending. */
type Rest = AsyncGenerator<{ items: unknown[]; pending?: { lines: unknown[] } | undefined }>;

interface Outcome {
  done?: StagedBatch | undefined;
  error?: Error | undefined;
  /** Settles once `done` or `error` is set. */
  pending: Promise<void>;
}

/**
 * Reads, maps and stages every record into the sort. A large input gets a helper thread (see
 * read-helper.ts) that stages some of the batches; their refusals are still reported in input order,
 * batch by batch. `--max-errors` stops the run at the record whose refusal passes it: refusals are
 * reported in input order, so that is the same record whichever thread staged it, and what was read
 * after it (the rest of its batch, batches read ahead or held by the helper) counts as never read.
 */
export async function readAll(o: PipelineOptions, sorter: ExternalSorter): Promise<PipelineEnd> {
  const { stats } = o;
  const plan = planAccess(o.spec);
  // A resume finds the mapping's rejections again; they were reported by the run that wrote the checkpoint.
  const report = o.resume === undefined;
  let rejectedHere = 0;
  /** The ordinal of the record whose refusal passed --max-errors. */
  let stopAt: number | undefined;
  const reject = (r: Rejection): void => {
    if (stopAt !== undefined) return;
    stats.rejected++;
    rejectedHere++;
    if (report) o.onReject(r);
    if (stats.rejected > o.maxErrors) stopAt = r.seq;
  };
  // Records are either staged or refused, and ordinals count them from 0: the counts up to the stop follow.
  const stopAtLimit = async (rest: Rest | undefined, at: number): Promise<PipelineEnd> => {
    const more = rest ? await countRest(o, rest) : 0;
    stats.unread = more === null ? null : stats.records - (at + 1) + more;
    stats.records = at + 1;
    stats.staged = at + 1 - rejectedHere;
    return 'max-errors';
  };
  const onBytes = (n: number, chunk: Buffer) => {
    stats.bytes += n;
    // What a checkpoint's resume compares: an input edited in place, its size and time kept, resumed
    // at a position of another sorted run (found by probing: edited rows stored in their old form).
    stats.content = crc32(chunk, stats.content);
  };
  if (o.files.some((f) => f.preset !== undefined)) return readPresets(o, sorter, plan, reject, onBytes);
  const keepRaw = o.keepRaw === true;
  const helperOptions = o.readHelper === false ? undefined : (o.readHelper ?? {});
  // With one core, a helper would only add its own start and the batches' copies.
  const entry =
    helperOptions && (helperOptions.entry ?? (availableParallelism() > 1 ? helperEntry() : undefined));
  const afterBytes = helperOptions?.afterBytes ?? HELPER_AFTER_BYTES;
  const expectedBytes = entry ? await knownSize(o.files) : 0;
  // Fields are split where a batch is staged, so that the helper takes that work too.
  const batches = abortable(
    readInputs(o.files, { skip: 0, onBytes, stdin: o.stdin, deferFields: entry !== undefined }),
    o.signal,
  );
  let helper: ReadHelper | undefined;
  // Outcomes in input order; a helper's arrives later, and reporting waits for it. A helper that
  // fails loses what it held, so the run fails (with its reason) when that outcome's turn comes.
  const outcomes: Outcome[] = [];
  const noted = new Set<string>();
  const settle = (b: StagedBatch): void => {
    stats.staged += b.staged;
    for (const r of b.rejections) reject(r);
    for (const d of b.dropped) {
      if (noted.has(d.field) || !report) continue;
      noted.add(d.field);
      o.onDropped?.(d);
    }
  };
  const reportSettled = (): void => {
    for (let first = outcomes[0]; first?.done || first?.error; first = outcomes[0]) {
      // Past the stop, a later batch's outcome, a helper's failure included, changes nothing.
      if (stopAt !== undefined) return;
      if (first.error) throw first.error;
      outcomes.shift();
      if (first.done) settle(first.done);
    }
  };
  const reportAll = async (): Promise<void> => {
    while (outcomes.length > 0 && stopAt === undefined) {
      await outcomes[0]!.pending;
      reportSettled();
    }
  };
  try {
    for await (const batch of batches) {
      stats.records += batch.items.length + (batch.pending?.lines.length ?? 0);
      if (!helper && entry && Math.max(expectedBytes, stats.bytes) >= afterBytes) {
        sorter.budgetBytes = sorter.budgetBytes / 2;
        const dir = await sorter.directory();
        helper = new ReadHelper(entry, { spec: o.spec, keepRaw, dir, budgetBytes: sorter.budgetBytes });
        if (helperOptions?.awaitReady === true) await helper.ready;
      }
      if (helper?.hasRoom) {
        const outcome: Outcome = { pending: Promise.resolve() };
        outcome.pending = helper.stage({ items: batch.items, pending: batch.pending }).then(
          (b) => {
            outcome.done = b;
          },
          (error: unknown) => {
            outcome.error = error instanceof Error ? error : new Error(String(error));
          },
        );
        outcomes.push(outcome);
      } else {
        outcomes.push({ done: stageBatch(batch, plan, keepRaw, sorter), pending: Promise.resolve() });
      }
      reportSettled();
      if (stopAt !== undefined) return await stopAtLimit(batches, stopAt);
      if (sorter.full) await sorter.spill();
      if (o.signal?.aborted) await reportAll();
      const stop = interrupted(o);
      if (stop) return stop;
    }
    await reportAll();
    if (stopAt !== undefined) return await stopAtLimit(undefined, stopAt);
    // Interrupted while the input was idle (abortable).
    const stop = interrupted(o);
    if (stop) return stop;
    if (helper) {
      sorter.adopt(await helper.finish());
      helperOptions?.onDone?.(helper.handled);
    }
    return 'complete';
  } finally {
    await helper?.close();
  }
}

/** The same reading when some files are read by a preset (importer/presets/): records come mapped. */
async function readPresets(
  o: PipelineOptions,
  sorter: ExternalSorter,
  plan: AccessPlan,
  reject: (r: Rejection) => void,
  onBytes: (n: number, chunk: Buffer) => void,
): Promise<PipelineEnd> {
  const { stats } = o;
  const batches = abortable(readMapped(o.files, { plan, onBytes, stdin: o.stdin }), o.signal);
  for await (const batch of batches) {
    for (const [i, item] of batch.items.entries()) {
      stats.records++;
      if (!item.ok) {
        reject(item.rejection);
        if (stats.rejected > o.maxErrors) {
          const more = await countRest(o, batches);
          stats.unread = more === null ? null : batch.items.length - (i + 1) + more;
          return 'max-errors';
        }
      } else {
        sorter.add(stage(item.mapped, o.keepRaw === true));
        stats.staged++;
      }
    }
    if (sorter.full) await sorter.spill();
    const stop = interrupted(o);
    if (stop) return stop;
  }
  return interrupted(o) ?? 'complete';
}

/** The inputs' size in bytes as far as known beforehand (stdin and unreadable files count 0). */
async function knownSize(files: PipelineOptions['files']): Promise<number> {
  let total = 0;
  for (const f of files) {
    if (f.path === '-') continue;
    total += await stat(f.path).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}

/** Ctrl-C: the run stops after this batch, the rest uncounted (counting it would keep it from stopping at once). */
function interrupted(o: PipelineOptions): PipelineEnd | undefined {
  if (!o.signal?.aborted) return undefined;
  o.stats.unread = null;
  return 'interrupted';
}

/** Records never read after a stop at --max-errors: counted (not mapped) where the input allows. */
async function countRest(o: PipelineOptions, rest: Rest): Promise<number | null> {
  if (o.files.some((f) => f.path === '-')) {
    await rest.return(undefined);
    return null;
  }
  let n = 0;
  for await (const batch of rest) {
    n += batch.items.length + (batch.pending?.lines.length ?? 0);
    if (o.signal?.aborted) return null;
  }
  return n;
}
