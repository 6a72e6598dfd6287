import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { compareStaged, fromLine, type SortKeys, type Staged, toLine } from './staging.js';

export interface SortOptions {
  /** Where spill files go (a fresh folder is made inside and removed afterwards). */
  parent?: string | undefined;
  /** The process that sorts: its folder is `sort-<owner>-…`, which `removeStaleSpills` can judge. */
  owner?: number | undefined;
  /** Memory held before a sorted run is written out. */
  budgetBytes?: number | undefined;
}

const DEFAULT_BUDGET = 48 * 1024 * 1024;

/** A folder of this version's sorts (`sort-<pid>-` + mkdtemp's six characters), and of earlier ones. */
const OWNED = /^sort-(\d+)-[A-Za-z0-9]{6}$/;
const UNOWNED = /^sort-[A-Za-z0-9]{6}$/;
/** An unowned folder (an earlier version's) this old is no running sort's. */
const UNOWNED_STALE_MS = 24 * 3_600_000;

/**
 * Removes the spill folders in `parent` whose sort is gone: a run killed (`kill -9`, power loss) or
 * stopped twice never removed its folder, and later runs left it there for good (54 MB found after
 * one). A folder names its process; `alive` says whether that process still runs.
 */
export async function removeStaleSpills(
  parent: string,
  alive: (pid: number) => boolean,
  now = Date.now(),
): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owned = OWNED.exec(name);
    let stale = owned !== null && !alive(Number(owned[1]));
    if (owned === null && UNOWNED.test(name)) {
      const info = await stat(join(parent, name)).catch(() => undefined);
      stale = info !== undefined && now - info.mtimeMs > UNOWNED_STALE_MS;
    }
    if (stale) {
      await rm(join(parent, name), { recursive: true, force: true });
      removed.push(name);
    }
  }
  return removed;
}

/**
 * A record as the sort holds it: its keys and its spill line. Held whole, a record's nested objects
 * all survived the young generation's collections until its run was written; as one string, the
 * objects die young, where collecting them costs nothing.
 */
interface Held extends SortKeys {
  line: string;
}

function hold(s: Staged): Held {
  return { g: s.g, ms: s.ms, r: s.r, h: s.h, opens: s.opens, line: toLine(s) };
}

/** A held record's size in memory: its strings at two bytes a character (at most), and the object. */
const heldBytes = (h: Held): number => 2 * (h.line.length + h.g.length + h.h.length) + 120;

async function writeRun(path: string, items: readonly Held[]): Promise<void> {
  const out = createWriteStream(path, { mode: 0o600 });
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  let chunk = '';
  for (const item of items) {
    chunk += `${item.line}\n`;
    if (chunk.length > 1 << 20) {
      const flowing = out.write(chunk);
      chunk = '';
      if (!flowing) await new Promise<void>((resolve) => out.once('drain', resolve));
    }
  }
  out.end(chunk);
  await done;
}

/**
 * Bytes read from a run at a time. A merge holds two such pieces of every run (the one it takes
 * records from, and the next, read meanwhile), and it has as many runs as the input has budgets'
 * worth of records: readline held ~0.5 MB a run (its queue of lines, each keeping its chunk alive),
 * 30 MB of the reading thread's heap at 1M records (67 runs).
 */
const RUN_READ_BYTES = 32 * 1024;

/**
 * A run's records, a piece's worth at a time. The next piece is read while this one's records are
 * parsed and merged: read one after the other, the merge waited on the disk ~0.5 s of a 300k-record
 * dry run's ~3.5 s of sending.
 */
async function* readRun(path: string): AsyncGenerator<Staged[]> {
  const file = await open(path, 'r');
  let next: Promise<{ bytes: Buffer; n: number }> | undefined;
  try {
    const decoder = new StringDecoder('utf8');
    const read = (bytes: Buffer) =>
      file
        .read(bytes, 0, RUN_READ_BYTES, null)
        .then((r): { bytes: Buffer; n: number } => ({ bytes, n: r.bytesRead }));
    let spare: Buffer = Buffer.allocUnsafe(RUN_READ_BYTES);
    next = read(Buffer.allocUnsafe(RUN_READ_BYTES));
    let rest = '';
    for (;;) {
      const { bytes, n } = await next;
      if (n === 0) break;
      const text = rest + decoder.write(bytes.subarray(0, n));
      next = read(spare);
      spare = bytes;
      const items: Staged[] = [];
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        if (end > start) items.push(fromLine(text.slice(start, end)));
        start = end + 1;
      }
      rest = text.slice(start);
      if (items.length > 0) yield items;
    }
    rest += decoder.end();
    if (rest !== '') yield [fromLine(rest)];
  } finally {
    // A merge left early leaves a read ahead in flight: the file closes after it.
    await next?.catch(() => undefined);
    await file.close();
  }
}

/** Where the merge is in one run: the records of its current piece, and the rest of the run. */
interface Cursor {
  items: Staged[];
  at: number;
  rest: AsyncGenerator<Staged[]>;
}

const headOf = (c: Cursor): Staged => c.items[c.at]!;

/** A binary heap of run cursors, by their head records: the k-way merge of sorted runs. */
class Heads {
  private readonly heap: Cursor[] = [];

  get size(): number {
    return this.heap.length;
  }

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
const MERGE_BATCH = 256;

/**
 * Sorts the run's records in bounded memory: records are held until the budget is reached, then
 * sorted and written to a run file; reading merges the runs. An input that fits is never written.
 * Memory is the budget plus one record per run file, whatever the input's size.
 */
export class ExternalSorter {
  private buffer: Held[] = [];
  private held = 0;
  private dir: string | undefined;
  private readonly runs: string[] = [];
  /** Memory held before a run is written: shared out when a helper thread sorts part of the input. */
  budgetBytes: number;

  constructor(private readonly options: SortOptions = {}) {
    this.budgetBytes = options.budgetBytes ?? DEFAULT_BUDGET;
  }

  /** How many sorted runs were written to disk (0: the input fitted in memory). */
  get spilled(): number {
    return this.runs.length;
  }

  /** Sorted runs written so far (a read helper hands its own to the reading thread's sorter). */
  get runFiles(): readonly string[] {
    return this.runs;
  }

  /** The folder spill files go to, made on first use; a helper's sorter writes inside it. */
  async directory(): Promise<string> {
    if (this.dir === undefined) {
      const parent = this.options.parent ?? tmpdir();
      await mkdir(parent, { recursive: true, mode: 0o700 });
      this.dir = await mkdtemp(
        join(parent, this.options.owner === undefined ? 'sort-' : `sort-${this.options.owner}-`),
      );
    }
    return this.dir;
  }

  /** Merges runs another sorter wrote (inside `directory()`, so `dispose` removes them too). */
  adopt(runs: readonly string[]): void {
    this.runs.push(...runs);
  }

  /** Writes whatever is held as one more run (a helper does this before handing its runs over). */
  async spillRest(): Promise<void> {
    if (this.buffer.length > 0) await this.spill();
  }

  /** Holds a record; when `full`, the caller awaits `spill()` before adding more. */
  add(item: Staged): void {
    const h = hold(item);
    this.buffer.push(h);
    this.held += heldBytes(h);
  }

  get full(): boolean {
    return this.held >= this.budgetBytes;
  }

  /** Sorts what is held and writes it out as one run. */
  async spill(): Promise<void> {
    const dir = await this.directory();
    const items = this.buffer.sort(compareStaged);
    this.buffer = [];
    this.held = 0;
    const path = join(dir, `run-${this.runs.length}.jsonl`);
    await writeRun(path, items);
    this.runs.push(path);
  }

  /** Every record added, in order, a batch at a time. Call once, after the last add. */
  async *sorted(): AsyncGenerator<Staged[]> {
    if (this.runs.length === 0) {
      const items = this.buffer.sort(compareStaged);
      this.buffer = [];
      for (let i = 0; i < items.length; i += MERGE_BATCH)
        yield items.slice(i, i + MERGE_BATCH).map((item) => fromLine(item.line));
      return;
    }
    if (this.buffer.length > 0) await this.spill();
    const heads = new Heads();
    const readers: Array<AsyncGenerator<Staged[]>> = [];
    try {
      for (const path of this.runs) {
        const rest = readRun(path);
        readers.push(rest);
        const first = await rest.next();
        if (!first.done) heads.push({ items: first.value, at: 0, rest });
      }
      let batch: Staged[] = [];
      for (let top = heads.top; top !== undefined; top = heads.top) {
        batch.push(headOf(top));
        if (++top.at < top.items.length) heads.siftDown();
        else {
          // Only a run whose piece is used up waits, for its next piece (read ahead: see readRun).
          const next = await top.rest.next();
          if (next.done) heads.pop();
          else {
            top.items = next.value;
            top.at = 0;
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

  /** Removes the spill files (always call, in finally). */
  async dispose(): Promise<void> {
    this.buffer = [];
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
