import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The embedded service thread's entry when the build made its bundle (scripts/bundle-worker.mjs): it
 * runs the one-file CommonJS bundle of embedded-worker.ts through V8 with the code cache the build
 * recorded beside it, so the thread starts without compiling ~4 MB of JavaScript again. Node 20 has
 * no compile cache of its own (`module.enableCompileCache` is Node 22), and an ES module cannot be
 * given one, hence CommonJS and `vm.Script`. A cache V8 refuses (another Node, other V8 flags) or one
 * that is missing only costs the compile it would have saved.
 *
 * Messages out, before the bundle's own: `{ codeCache }` saying whether the cache was used. With
 * `workerData.recordCodeCache` (the build), a `record-code-cache` message in writes the cache from
 * what has run so far and answers `{ codeCacheRecorded: bytes }`.
 */
const BUNDLE = fileURLToPath(new URL('./embedded-worker.bundle.cjs', import.meta.url));
const CODE_CACHE = fileURLToPath(new URL('./embedded-worker.bundle.cache', import.meta.url));

export type CodeCacheStatus = 'accepted' | 'rejected' | 'absent';

type ModuleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

function cached(): Buffer | undefined {
  try {
    return readFileSync(CODE_CACHE);
  } catch {
    return undefined;
  }
}

const port = parentPort;
if (!port) throw new Error('embedded-loader.js runs only as a worker thread');
const cachedData = cached();
// The wrapper CommonJS gives every module, so the bundle runs as if `require`d.
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {${readFileSync(BUNDLE, 'utf8')}\n})`,
  { filename: BUNDLE, ...(cachedData === undefined ? {} : { cachedData }) },
);
const codeCache: CodeCacheStatus =
  cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted';
port.postMessage({ codeCache });
if ((workerData as { recordCodeCache?: boolean } | null)?.recordCodeCache === true) {
  port.on('message', (message: unknown) => {
    if (message !== 'record-code-cache') return;
    const data = script.createCachedData();
    const partial = `${CODE_CACHE}.${process.pid}.tmp`;
    writeFileSync(partial, data);
    renameSync(partial, CODE_CACHE);
    port.postMessage({ codeCacheRecorded: data.length });
  });
}
const module = { exports: {} };
(script.runInThisContext() as ModuleFunction)(
  module.exports,
  createRequire(BUNDLE),
  module,
  BUNDLE,
  dirname(BUNDLE),
);
