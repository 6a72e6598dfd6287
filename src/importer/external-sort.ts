import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileErrorReason } from '../shared/file-errors.js';
import { type LinePlace, LineStore } from './line-store.js';
import { MERGE_BATCH, mergeRuns } from './run-merge.js';
import { compareStaged, fromLine, type SortKeys, type Staged, toLine } from './staging.js';

export interface SortOptions {
  /** Where spill files go (a fresh folder is made inside and removed afterwards). */
  parent?: string | undefined;
  /** The process that sorts: its folder is `sort-<owner>-…`, which `removeStaleSpills` can judge. */
  owner?: number | undefined;
  /** Memory held before a sorted run is written out. */
  budgetBytes?: number | undefined;
  /** `parent` could not be written (why, in words): the system's temp folder is used instead. */
  onFallback?: ((reason: string) => void) | undefined;
}

/** Errors of a folder that cannot take files (its mode, a read-only disk), not of the path. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

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
 * A record as the sort holds it: its keys, and where its spill line waits in the sorter's
 * `LineStore`, outside the heap. Held whole, a record's nested objects all survived the young
 * generation's collections until its run was written; held as one string, the lines did.
 */
interface Held extends SortKeys {
  at: LinePlace;
}

/**
 * A held record's size in memory: its line's bytes counted twice (as when lines were strings of two
 * bytes a character, at most, so that a run holds as many records as it did), its keys' strings, and
 * the objects.
 */
const heldBytes = (h: Held): number => 2 * (h.at.n + h.g.length + h.h.length) + 150;

/**
 * Sorts the run's records in bounded memory: records are held until the budget is reached, then
 * sorted and written to a run file; reading merges the runs. An input that fits is never written.
 * Memory is the budget plus one record per run file, whatever the input's size.
 */
export class ExternalSorter {
  private buffer: Held[] = [];
  private readonly lines = new LineStore();
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
      const { parent, owner, onFallback } = this.options;
      const prefix = owner === undefined ? 'sort-' : `sort-${owner}-`;
      try {
        await mkdir(parent ?? tmpdir(), { recursive: true, mode: 0o700 });
        this.dir = await mkdtemp(join(parent ?? tmpdir(), prefix));
      } catch (error) {
        // An import whose data directory's `imports` is not writable stopped once its input outgrew
        // the memory budget, blaming the directory's owner (found by probing).
        const code = (error as NodeJS.ErrnoException).code;
        if (parent === undefined || code === undefined || !UNWRITABLE.has(code)) throw error;
        onFallback?.(`${fileErrorReason(error)} in ${parent}`);
        this.dir = await mkdtemp(join(tmpdir(), prefix));
      }
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
    const h: Held = {
      g: item.g,
      ms: item.ms,
      r: item.r,
      h: item.h,
      opens: item.opens,
      at: this.lines.add(toLine(item)),
    };
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
    this.lines.writeLines(
      path,
      items.map((item) => item.at),
    );
    this.lines.clear();
    this.runs.push(path);
  }

  /** Every record added, in order, a batch at a time. Call once, after the last add. */
  async *sorted(): AsyncGenerator<Staged[]> {
    if (this.runs.length === 0) {
      const items = this.buffer.sort(compareStaged);
      this.buffer = [];
      for (let i = 0; i < items.length; i += MERGE_BATCH)
        yield items.slice(i, i + MERGE_BATCH).map((item) => fromLine(this.lines.text(item.at)));
      this.lines.dispose();
      return;
    }
    if (this.buffer.length > 0) await this.spill();
    // The merge reads the runs' files: the store's pieces are not needed again.
    this.lines.dispose();
    yield* mergeRuns(this.runs);
  }

  /** Removes the spill folder (always call, in finally), as far as it can: a later run removes one left. */
  async dispose(): Promise<void> {
    this.buffer = [];
    this.lines.dispose();
    if (this.dir) await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
