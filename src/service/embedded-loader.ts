import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { bundleScript } from '../shared/bundle-script.js';

/**
 * The embedded service thread's entry when the build made its bundle (scripts/bundle-worker.mjs): it
 * runs the one-file bundle of embedded-worker.ts with the code cache the build recorded beside it
 * (shared/bundle-script.ts), so the thread starts without compiling ~4 MB of JavaScript again.
 *
 * Messages out, before the bundle's own: `{ codeCache }` saying whether the cache was used. With
 * `workerData.recordCodeCache` (the build), a `record-code-cache` message in writes the cache from
 * what has run so far and answers `{ codeCacheRecorded: bytes }`.
 */
const BUNDLE = fileURLToPath(new URL('./embedded-worker.bundle.cjs', import.meta.url));
const CODE_CACHE = fileURLToPath(new URL('./embedded-worker.bundle.cache', import.meta.url));

const port = parentPort;
if (!port) throw new Error('embedded-loader.js runs only as a worker thread');
const script = bundleScript(BUNDLE, CODE_CACHE);
port.postMessage({ codeCache: script.codeCache });
if ((workerData as { recordCodeCache?: boolean } | null)?.recordCodeCache === true) {
  port.on('message', (message: unknown) => {
    if (message === 'record-code-cache') port.postMessage({ codeCacheRecorded: script.recordCodeCache() });
  });
}
script.run();
