import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { MappingSpec } from './mapping-spec.js';
import type { ReadBatch } from './sources.js';
import type { StagedBatch } from './stage-batch.js';

export interface HelperStart {
  spec: MappingSpec;
  keepRaw: boolean;
  /** The reading thread's spill folder: the helper's runs go inside it. */
  dir: string;
  budgetBytes: number;
}

/** A batch as read: records, and pending CSV records whose fields the helper splits. */
export type HelperBatch = Pick<ReadBatch, 'items' | 'pending'>;

export type HelperRequest = { type: 'batch'; id: number; batch: HelperBatch } | { type: 'finish' };

export type HelperAnswer =
  | { type: 'ready' }
  | ({ type: 'batch'; id: number } & StagedBatch)
  | { type: 'runs'; runs: string[] }
  | { type: 'failed'; message: string };

/** The helper's built entry, beside this module; absent when running from sources or inside the single-file binary. */
export function helperEntry(): URL | undefined {
  try {
    const url = new URL('./read-helper-worker.js', import.meta.url);
    return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Batches given to the helper and not yet answered, at most: one it works on, three waiting. With one
 * waiting, the helper sat idle a fifth of the reading phase (a CPU profile of a 300k-turn import) while
 * the reading thread staged a batch itself, and took 113 of 236 batches; with three it takes ~131, and
 * the import ran 21.7 and 23.1 s against 19.9 and 19.5 s (alternated runs on a quiet 2-core machine;
 * the dry run ~9.2 s against ~8.9). Six or eight did no better.
 */
const DEPTH = 4;

/**
 * A second thread for the reading phase of a large import. Reading a file (bytes, record
 * boundaries, lines) stays on the reading thread, which needs the order; splitting a CSV record's
 * fields, mapping, validating and staging it into the sort depend on that record alone, so whole
 * batches are handed to the helper whenever it has room and staged on the reading thread otherwise
 * (the batch's text crosses, not its records: a string clones at memory speed). The sort's order
 * depends only on content, so which thread held a record changes nothing sent. Until it is loaded,
 * and whenever it is busy, the reading thread stages batches itself.
 */
export class ReadHelper {
  private readonly worker: Worker;
  private loaded = false;
  private failure: Error | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(b: StagedBatch): void; reject(e: Error): void }>();
  private runs: { resolve(r: string[]): void; reject(e: Error): void } | undefined;
  /** Batches staged by the helper so far. */
  handled = 0;
  /** Settles once the helper is loaded (or has failed: it then resolves too, `hasRoom` says no). */
  readonly ready: Promise<void>;
  private onReady: () => void = () => undefined;

  constructor(entry: URL, start: HelperStart) {
    this.ready = new Promise<void>((resolve) => {
      this.onReady = resolve;
    });
    this.worker = new Worker(entry, { workerData: start });
    // Never what keeps the process alive: the reading thread awaits every answer it needs.
    this.worker.unref();
    this.worker.on('message', (a: HelperAnswer) => this.onAnswer(a));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', () => this.fail(new Error('the read helper thread stopped')));
  }

  /** Loaded, sound, and with room for another batch. */
  get hasRoom(): boolean {
    return this.loaded && this.failure === undefined && this.waiting.size < DEPTH;
  }

  stage(batch: HelperBatch): Promise<StagedBatch> {
    const id = this.nextId++;
    return new Promise<StagedBatch>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'batch', id, batch } satisfies HelperRequest);
    });
  }

  /** After the last batch: the helper writes what it holds as a run, and hands over its runs. */
  finish(): Promise<string[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<string[]>((resolve, reject) => {
      this.runs = { resolve, reject };
      this.worker.postMessage({ type: 'finish' } satisfies HelperRequest);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the read helper was closed');
    await this.worker.terminate();
  }

  private onAnswer(a: HelperAnswer): void {
    if (a.type === 'ready') {
      this.loaded = true;
      this.onReady();
    } else if (a.type === 'batch') {
      this.handled++;
      const w = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      w?.resolve({ rejections: a.rejections, staged: a.staged, dropped: a.dropped });
    } else if (a.type === 'runs') {
      this.runs?.resolve(a.runs);
      this.runs = undefined;
    } else this.fail(new Error(`the read helper failed: ${a.message}`));
  }

  private fail(error: Error): void {
    if (this.failure === undefined) this.failure = error;
    this.onReady();
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
    this.runs?.reject(this.failure);
    this.runs = undefined;
  }
}
