import { parentPort, workerData } from 'node:worker_threads';
import type { CodeCacheStatus } from '../shared/bundle-script.js';
import type { LocalAnswer, LocalBatch } from '../shared/local-queue.js';
import { classifyDataDirError, DataDirError, DataDirLockedError, type StorageProblem } from './lock-error.js';
import { startService } from './service.js';

/**
 * The embedded service's thread (see embedded.ts). Messages out: `{ log }`, then `{ ready }` or
 * `{ failed }`, `{ answer }` for each queued batch, and `{ closed }` after a `close` message in. Errors cross as name + message only: the
 * main thread rebuilds the ones it acts on (a locked, full, read-only or damaged data directory) and
 * never sees a stack.
 */
export interface WorkerStart {
  dataDir: string;
  memoryLimit: string;
  memoryCeiling: string;
  prices?: string | undefined;
}

/**
 * Messages in: `start` first to a thread started warm (`workerData` `{ warm: true }`: it loads its
 * code and waits to learn its data directory), then `close`, or a batch for the in-process queue
 * (answered by `{ answer }` with its id).
 */
export type WorkerRequest = 'close' | { start: WorkerStart } | { queue: { id: number; batch: LocalBatch } };

export type WorkerMessage =
  | { log: string }
  | { diagnostic: string }
  | { answer: { id: number; answer: LocalAnswer } }
  | { ready: { url: string; apiKey: string; projectId: string } }
  | { failed: { name: string; message: string; locked: boolean; problem?: StorageProblem; detail?: string } }
  | { closed: true }
  /** A thread started warm has loaded its code (ending it before then can abort the process). */
  | { loaded: true }
  /** From the bundle's loader (embedded-loader.ts), first: whether V8 took the build's code cache. */
  | { codeCache: CodeCacheStatus };

const port = parentPort;
if (!port) throw new Error('embedded-worker.js runs only as a worker thread');
const post = (message: WorkerMessage) => port.postMessage(message);

/** The data directory and options: given at start, or by a `start` message to a thread started warm. */
function options(given: WorkerStart | { warm: true }): Promise<WorkerStart> | WorkerStart {
  if (!('warm' in given)) return given;
  return new Promise<WorkerStart>((resolve) => {
    port?.once('message', (message: WorkerRequest) => {
      if (typeof message === 'object' && 'start' in message) resolve(message.start);
    });
    post({ loaded: true });
  });
}

async function run(): Promise<void> {
  const { dataDir, memoryLimit, memoryCeiling, prices } = await options(
    workerData as WorkerStart | { warm: true },
  );
  try {
    const service = await startService({
      dataDir,
      port: 0,
      memoryLimit,
      memoryCeiling,
      prices,
      log: (line) => post({ log: line }),
      diagnostics: (line) => post({ diagnostic: line }),
    });
    port?.on('message', (message: WorkerRequest) => {
      if (typeof message === 'object') {
        if (!('queue' in message)) return;
        const { id, batch } = message.queue;
        void service.localQueue(batch).then((answer) => post({ answer: { id, answer } }));
        return;
      }
      if (message !== 'close') return;
      void service.close().finally(() => {
        post({ closed: true });
        port?.close();
      });
    });
    post({ ready: { url: service.url, apiKey: service.local.api_key, projectId: service.local.project_id } });
    // This thread serves an import, whose first batch comes once its input is read and sorted:
    // meanwhile the project's ingest cache is loaded (given up as soon as a batch arrives).
    void service.warmIngest(service.local.project_id);
  } catch (error) {
    const e =
      classifyDataDirError(error, dataDir) ?? (error instanceof Error ? error : new Error(String(error)));
    const storage = e instanceof DataDirError ? { problem: e.problem, detail: e.detail } : {};
    post({
      failed: { name: e.name, message: e.message, locked: e instanceof DataDirLockedError, ...storage },
    });
    port?.close();
  }
}

void run();
