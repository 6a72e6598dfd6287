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
 * Bytes read from a run at a time. A merge holds one such piece of every run, and it has as many runs
 * as the input has budgets' worth of records: readline held ~0.5 MB a run (its queue of lines, each
 * keeping its chunk alive), 30 MB of the reading thread's heap at 1M records (67 runs).
 */
const RUN_READ_BYTES = 32 * 1024;

async function* readRun(path: string): AsyncGenerator<Staged> {
  const file = await open(path, 'r');
  try {
    const decoder = new StringDecoder('utf8');
    const bytes = Buffer.allocUnsafe(RUN_READ_BYTES);
    let rest = '';
    for (;;) {
      const { bytesRead } = await file.read(bytes, 0, RUN_READ_BYTES, null);
      if (bytesRead === 0) break;
      const text = rest + decoder.write(bytes.subarray(0, bytesRead));
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        if (end > start) yield fromLine(text.slice(start, end));
        start = end + 1;
      }
      rest = text.slice(start);
    }
    rest += decoder.end();
    if (rest !== '') yield fromLine(rest);
  } finally {
    await file.close();
  }
}

/** A binary heap of run heads: the k-way merge of sorted runs. */
class Heads {
  private readonly heap: Array<{ item: Staged; it: AsyncGenerator<Staged> }> = [];

  get size(): number {
    return this.heap.length;
  }

  push(entry: { item: Staged; it: AsyncGenerator<Staged> }): void {
    const h = this.heap;
    h.push(entry);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (compareStaged(h[parent]!.item, h[i]!.item) <= 0) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  pop(): { item: Staged; it: AsyncGenerator<Staged> } | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && compareStaged(h[l]!.item, h[m]!.item) < 0) m = l;
        if (r < h.length && compareStaged(h[r]!.item, h[m]!.item) < 0) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}

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

  /** Every record added, in order. Call once, after the last add. */
  async *sorted(): AsyncGenerator<Staged> {
    if (this.runs.length === 0) {
      const items = this.buffer.sort(compareStaged);
      this.buffer = [];
      for (const item of items) yield fromLine(item.line);
      return;
    }
    if (this.buffer.length > 0) await this.spill();
    const heads = new Heads();
    const readers: Array<AsyncGenerator<Staged>> = [];
    try {
      for (const path of this.runs) {
        const it = readRun(path);
        readers.push(it);
        const first = await it.next();
        if (!first.done) heads.push({ item: first.value, it });
      }
      while (heads.size > 0) {
        const top = heads.pop()!;
        yield top.item;
        const next = await top.it.next();
        if (!next.done) heads.push({ item: next.value, it: top.it });
      }
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
