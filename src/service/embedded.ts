import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { bundleIsCurrent } from '../shared/bundle-script.js';
import { canonicalPath } from '../shared/file-path.js';
import type { LocalAnswer, LocalBatch } from '../shared/local-queue.js';
import type { WorkerMessage, WorkerRequest, WorkerStart } from './embedded-worker.js';
import { DataDirError, DataDirLockedError } from './lock-error.js';

/** The service a CLI command runs for itself when nothing else serves its data directory. */
export interface EmbeddedService {
  url: string;
  apiKey: string;
  projectId: string;
  /** `thread` when it runs on a worker thread, `inline` when on the caller's own thread. */
  where: 'thread' | 'inline';
  /**
   * The queue route in-process (local-queue.ts): the batch goes to the service's ingest core as a
   * structured clone, without JSON text, HTTP or a second parse, and comes back as the route's answer.
   */
  queue(batch: LocalBatch): Promise<LocalAnswer>;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  log: (line: string) => void;
  /** The service's lines for operators (ServiceOptions.diagnostics); `log` when absent. */
  diagnostics?: ((line: string) => void) | undefined;
  /**
   * On a worker thread of its own where the build made its entry (an import of more than a few MB:
   * commands/import-thread.ts), else on the caller's thread.
   */
  thread?: boolean | undefined;
  /** `--prices`: a price file merged over the built-in table. */
  prices?: string | undefined;
  /** What the command will do with it: `import` gets the import's DuckDB memory limit. */
  workload?: 'import' | undefined;
  /** false: an inline service does not keep the process alive by itself (service.ts). */
  holdsProcess?: boolean | undefined;
}

/**
 * The built worker entry beside this module: the loader of its one-file bundle with its code cache
 * (embedded-loader.ts, scripts/bundle-worker.mjs: a fraction of the start-up CPU of loading its ~400
 * modules one by one), else the entry itself; nothing where there is none. The single-executable
 * binary is one bundled file (no import.meta.url to resolve from), so it runs the service inline.
 */
function workerEntry(): URL | undefined {
  try {
    const file = (name: string) => fileURLToPath(new URL(name, import.meta.url));
    const entry = file('./embedded-worker.js');
    if (!existsSync(entry)) return undefined;
    // A bundle older than the entry it bundles (tsc run alone since) would run the build before's code.
    if (bundleIsCurrent(file('./embedded-worker.bundle.cjs'), entry))
      return new URL('./embedded-loader.js', import.meta.url);
    return new URL('./embedded-worker.js', import.meta.url);
  } catch {
    // Not a file URL: the single-executable binary.
    return undefined;
  }
}

/**
 * DuckDB's memory for a service that lives only as long as one command: enough for charts over
 * millions of events (larger work spills to DuckDB's temp directory); an import gets less (below).
 */
export const EMBEDDED_MEMORY_LIMIT = '128MB';

/**
 * DuckDB's memory for `cas import`, which only appends and updates a few rows per session: its
 * buffer pool filled up to the limit and stayed there, so peak RSS grew with the input. Imports of
 * the bench's files, alternated by hand against 128 MB: 1M shuffled CSV 544/543 MB against 634/605,
 * 100k 478/464 against 506/481, at the same speed (300k sorted: 37.0/36.0 s against 38.4/36.9); 32 MB
 * saved 20-30 MB more but was slower. `npm run bench -- import` (with the run reader of
 * importer/external-sort.ts): peak RSS at 1M 546 MB, against 690 MB before both.
 */
export const IMPORT_MEMORY_LIMIT = '64MB';

/**
 * How far either may grow when a write runs out of it (store/database.ts `memoryCeiling`): large texts
 * wait in memory, twice their size, until a checkpoint, and the import's 64 MB stopped an import of
 * 135 KB events. The limit doubles only for an input that needs it; a machine too small for this
 * fails the write as before (503).
 */
export const EMBEDDED_MEMORY_CEILING = '1GB';

const memoryLimitFor = (options: EmbeddedOptions): string =>
  options.workload === 'import' ? IMPORT_MEMORY_LIMIT : EMBEDDED_MEMORY_LIMIT;

async function startInline(options: EmbeddedOptions): Promise<EmbeddedService> {
  const { startService } = await import('./service.js');
  const service = await startService({
    dataDir: options.dataDir,
    port: 0,
    log: options.log,
    diagnostics: options.diagnostics ?? options.log,
    memoryLimit: memoryLimitFor(options),
    memoryCeiling: EMBEDDED_MEMORY_CEILING,
    prices: options.prices,
    ...(options.holdsProcess === false ? { holdsProcess: false } : {}),
  });
  return {
    url: service.url,
    apiKey: service.local.api_key,
    projectId: service.local.project_id,
    where: 'inline',
    queue: (batch) => service.localQueue(batch),
    close: () => service.close(),
  };
}

/** A thread loading the service's code before a command asks for it (prewarmEmbeddedService). */
let warm: { worker: Worker; loaded: Promise<void>; forget(): void } | undefined;

/**
 * Starts the service's thread loading its code (about half of a command's start-up) while the CLI
 * is still loading its own, when the command (an import of 4 MB or more) will likely start the
 * embedded service on a thread. The thread
 * touches nothing until `start` hands it a data directory, and it keeps no process alive; one that a
 * command did not take (it connected elsewhere after all, or failed first) is ended by
 * releaseWarmService.
 */
export function prewarmEmbeddedService(): void {
  if (warm || stopping) return;
  const entry = workerEntry();
  if (!entry) return;
  const worker = new Worker(entry, { workerData: { warm: true } });
  worker.unref();
  let done: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => {
    done = resolve;
  });
  const onMessage = (m: WorkerMessage) => {
    if ('loaded' in m) done();
  };
  const onEnd = () => done();
  worker.on('message', onMessage).on('error', onEnd).on('exit', onEnd);
  const forget = () => worker.off('message', onMessage).off('error', onEnd).off('exit', onEnd);
  warm = { worker, loaded, forget };
}

/**
 * Ends a warm thread no command took, once it has loaded its code: a process that exits while the
 * thread is inside DuckDB's native module initialisation aborts (exit 134). main.ts awaits this
 * before it exits.
 */
export async function releaseWarmService(): Promise<void> {
  const w = warm;
  warm = undefined;
  if (!w) return;
  await w.loaded;
  await w.worker.terminate();
}

/** The warm thread, told where to open, or a new thread. */
function newWorker(entry: URL, start: WorkerStart): Worker {
  const w = warm;
  warm = undefined;
  if (!w || w.worker.threadId === -1) return new Worker(entry, { workerData: start });
  const { worker } = w;
  w.forget();
  worker.ref();
  worker.postMessage({ start } satisfies WorkerRequest);
  return worker;
}

/** Services started (or starting) and not yet closed, for `closeEmbeddedServices`. */
const open = new Set<Promise<EmbeddedService>>();
let stopping = false;

/**
 * Closes every embedded service of this process, those still starting included, and refuses new
 * ones: what the CLI does on a signal before it exits. Exiting while DuckDB is inside a native call
 * (on the worker thread or this one) aborts the process ("terminate called after throwing an
 * instance of 'Napi::Error'", exit 134); closing first waits for requests in flight and checkpoints.
 */
export async function closeEmbeddedServices(): Promise<void> {
  stopping = true;
  await releaseWarmService();
  await Promise.allSettled(
    [...open].map(async (starting) => {
      const service = await starting;
      await service.close();
    }),
  );
}

/**
 * Starts the service over `dataDir` on a loopback port. A big import's service gets a thread of its
 * own (`thread`) where it can: the import then reads, maps and hashes on one core while the service
 * validates and writes on another (on one thread they took turns). Every other command runs it on the
 * caller's thread, which only waits for the answers meanwhile: a second thread would cost it ~0.3 s of
 * CPU to start Node in, and a second copy of the schemas and libraries the CLI has loaded already
 * (alternated by hand, `users list` on an empty store: 1.31 s of CPU with the thread, 1.01 s without;
 * 1.08 s against 0.94 s wall).
 * Closing waits for the service to finish in-flight requests and checkpoint.
 */
export function startEmbeddedService(options: EmbeddedOptions): Promise<EmbeddedService> {
  if (stopping) return Promise.reject(new Error('the process is stopping: no embedded service starts'));
  const key = canonicalPath(options.dataDir);
  let shared = byDir.get(key);
  if (shared && shared.prices !== options.prices) {
    return Promise.reject(
      new Error(`${options.dataDir} is already open in this process with other prices: close it first`),
    );
  }
  if (!shared) {
    // After a service over the directory that is still closing (its last user let go just now).
    const after = closingByDir.get(key) ?? Promise.resolve();
    const starting: Promise<EmbeddedService> = after
      .then(() => start(options))
      .then((service) => {
        // Once: the command's own close and a signal's may overlap, and both must wait for the end.
        let closing: Promise<void> | undefined;
        const close = () =>
          (closing ??= service.close().finally(() => {
            open.delete(starting);
            if (byDir.get(key)?.starting === starting) byDir.delete(key);
          }));
        return { ...service, close };
      });
    shared = { starting, users: 0, prices: options.prices };
    byDir.set(key, shared);
    open.add(starting);
    starting.catch(() => {
      open.delete(starting);
      byDir.delete(key);
    });
  }
  const entry = shared;
  entry.users += 1;
  return entry.starting.then((service) => {
    let released = false;
    // Each caller's close lets go of its share; the last one closes the service.
    const close = async (): Promise<void> => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0) return;
      // Let go of at once: a caller from now on starts a service of its own, once this one closed.
      if (byDir.get(key) === entry) byDir.delete(key);
      const closed = service.close();
      const settled = closed.catch(() => undefined);
      closingByDir.set(key, settled);
      void settled.then(() => {
        if (closingByDir.get(key) === settled) closingByDir.delete(key);
      });
      await closed;
    };
    return { ...service, close };
  });
}

/**
 * Services of this process by data directory. DuckDB's file lock keeps other processes out, not a
 * second open in the same one: two library Clients over one directory ran two services on one file,
 * which lost one's events without an error and could damage the file (found by probing). They share
 * one service, closed when the last of them closes.
 */
const byDir = new Map<
  string,
  { starting: Promise<EmbeddedService>; users: number; prices: string | undefined }
>();
/** Services whose last user let go, until they have closed (DuckDB checkpoints the file then). */
const closingByDir = new Map<string, Promise<unknown>>();

async function start(options: EmbeddedOptions): Promise<EmbeddedService> {
  const entry = options.thread === true ? workerEntry() : undefined;
  if (!entry) return startInline(options);
  const worker = newWorker(entry, {
    dataDir: options.dataDir,
    memoryLimit: memoryLimitFor(options),
    memoryCeiling: EMBEDDED_MEMORY_CEILING,
    prices: options.prices,
  });
  let onClosed: () => void = () => undefined;
  const waiting = new Map<number, { resolve(a: LocalAnswer): void; reject(e: Error): void }>();
  let nextId = 0;
  let gone: Error | undefined;
  const closed = new Promise<void>((resolve) => {
    onClosed = resolve;
  });
  const ready = await new Promise<{ url: string; apiKey: string; projectId: string }>((resolve, reject) => {
    worker.on('message', (message: WorkerMessage) => {
      if ('answer' in message) {
        const { id, answer } = message.answer;
        waiting.get(id)?.resolve(answer);
        waiting.delete(id);
      } else if ('log' in message) options.log(message.log);
      else if ('diagnostic' in message) (options.diagnostics ?? options.log)(message.diagnostic);
      else if ('ready' in message) resolve(message.ready);
      else if ('closed' in message) onClosed();
      else if ('loaded' in message || 'codeCache' in message) return;
      else if (message.failed.locked) reject(new DataDirLockedError(options.dataDir));
      else if (message.failed.problem) {
        reject(new DataDirError(message.failed.problem, options.dataDir, message.failed.detail ?? ''));
      } else reject(Object.assign(new Error(message.failed.message), { name: message.failed.name }));
    });
    worker.on('error', (error) => {
      // After start-up nobody awaits this promise: say it, or requests would just stop being answered.
      options.log(`the embedded service failed: ${error.message}`);
      reject(error);
    });
    worker.on('exit', (code) => {
      onClosed();
      gone = new Error(`the embedded service stopped (exit code ${code})`);
      for (const w of waiting.values()) w.reject(gone);
      waiting.clear();
      reject(gone);
    });
  });
  return {
    ...ready,
    where: 'thread',
    queue(batch) {
      if (gone) return Promise.reject(gone);
      const id = nextId++;
      return new Promise<LocalAnswer>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ queue: { id, batch } } satisfies WorkerRequest);
      });
    },
    async close() {
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}
