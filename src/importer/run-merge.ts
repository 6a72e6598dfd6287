import { readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { compareStaged, fromLine, type Staged } from './staging.js';

/**
 * Bytes read from a run at a time. A merge holds such a piece of every run (the lines it takes
 * records from), and it has as many runs as the input has budgets' worth of records: readline held
 * ~0.5 MB a run (its queue of lines, each keeping its chunk alive), 30 MB of the reading thread's
 * heap at 1M records (67 runs).
 */
const RUN_READ_BYTES = 32 * 1024;

/**
 * A run's spill lines, a piece's worth at a time. Pieces are read synchronously: a run was just
 * written, so its pages are in the system's cache, and a read of them takes microseconds, where an
 * asynchronous read paid ~50-120 µs of the merging thread's time for its promise and its trip through
 * libuv's pool (0.4 s of a 300k-record import to a sink, ~4% of that thread, whose sending is what
 * bounds the run). The kernel's read-ahead serves a run read in order from the disk. Lines are parsed
 * one at a time, as the merge takes them: a piece's records all parsed at once held ~70 records of
 * every run (67 runs at 1M records) in the heap.
 */
async function* readRun(path: string): AsyncGenerator<string[]> {
  const file = await open(path, 'r');
  try {
    const decoder = new StringDecoder('utf8');
    const bytes = Buffer.allocUnsafe(RUN_READ_BYTES);
    let rest = '';
    for (;;) {
      const n = readSync(file.fd, bytes, 0, RUN_READ_BYTES, null);
      if (n === 0) break;
      const text = rest + decoder.write(bytes.subarray(0, n));
      const lines: string[] = [];
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        if (end > start) lines.push(text.slice(start, end));
        start = end + 1;
      }
      rest = text.slice(start);
      if (lines.length > 0) yield lines;
    }
    rest += decoder.end();
    if (rest !== '') yield [rest];
  } finally {
    await file.close();
  }
}

/** Where the merge is in one run: its next record, the lines of its current piece, the rest of the run. */
interface Cursor {
  head: Staged;
  lines: string[];
  at: number;
  rest: AsyncGenerator<string[]>;
}

const headOf = (c: Cursor): Staged => c.head;

/** A binary heap of run cursors, by their head records: the k-way merge of sorted runs. */
class Heads {
  private readonly heap: Cursor[] = [];

  get top(): Cursor | undefined {
    return this.heap[0];
  }

  push(entry: Cursor): void {
    const h = this.heap;
    h.push(entry);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (compareStaged(headOf(h[parent]!), headOf(h[i]!)) <= 0) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  /** The top cursor's head changed (it moved on): restores the heap's order. */
  siftDown(): void {
    const h = this.heap;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && compareStaged(headOf(h[l]!), headOf(h[m]!)) < 0) m = l;
      if (r < h.length && compareStaged(headOf(h[r]!), headOf(h[m]!)) < 0) m = r;
      if (m === i) break;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }

  pop(): Cursor | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      this.siftDown();
    }
    return top;
  }
}

/**
 * Records handed out per step of the merge. An async generator costs two promises a step; a step a
 * record was ~0.3 s of a 300k-record dry run's main thread.
 */
export const MERGE_BATCH = 256;

/** The k-way merge of sorted run files: every record, in order, a batch at a time. */
export async function* mergeRuns(runs: readonly string[]): AsyncGenerator<Staged[]> {
  const heads = new Heads();
  const readers: Array<AsyncGenerator<string[]>> = [];
  try {
    for (const path of runs) {
      const rest = readRun(path);
      readers.push(rest);
      const first = await rest.next();
      if (!first.done) heads.push({ head: fromLine(first.value[0]!), lines: first.value, at: 0, rest });
    }
    let batch: Staged[] = [];
    for (let top = heads.top; top !== undefined; top = heads.top) {
      batch.push(top.head);
      if (++top.at < top.lines.length) {
        top.head = fromLine(top.lines[top.at]!);
        heads.siftDown();
      } else {
        // Only a run whose piece is used up reads its next piece (see readRun).
        const next = await top.rest.next();
        if (next.done) heads.pop();
        else {
          top.lines = next.value;
          top.at = 0;
          top.head = fromLine(top.lines[0]!);
          heads.siftDown();
        }
      }
      if (batch.length === MERGE_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    // A merge left early (the run stopped) closes its files now, not when they are collected.
    await Promise.all(readers.map((it) => it.return(undefined)));
  }
}
