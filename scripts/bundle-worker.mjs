// Part of `npm run build`, after tsc: the embedded service's thread (dist/service/embedded-worker.js
// and the ~400 modules it imports: fastify, zod schemas, the ingest core, the charts) bundled into one
// CommonJS file beside it, and V8's code cache of that file. Loading the modules one by one cost each
// command that starts the embedded service about 0.7 s of CPU (module resolution, and cjs-module-lexer
// reading every CommonJS dependency an ES module imports), before DuckDB even opened; one file loads in
// a third of that, and with the cache V8 also skips compiling it. embedded.ts starts the bundle through
// its loader (embedded-loader.ts) when it is there, and the unbundled entry otherwise (as under vitest,
// which runs src/). CommonJS because Node 20 can give a code cache only to a script (`vm.Script`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { build } from 'esbuild';
import { BUNDLE_BASE, WS_WITHOUT_NATIVE } from './bundle-common.mjs';

const dist = fileURLToPath(new URL('../dist/service/', import.meta.url));
const bundle = join(dist, 'embedded-worker.bundle.cjs');
const cache = join(dist, 'embedded-worker.bundle.cache');

rmSync(cache, { force: true });
// The ES-module bundle earlier builds made (started directly then): nothing starts it now.
rmSync(join(dist, 'embedded-worker.bundle.js'), { force: true });
await build({
  entryPoints: [join(dist, 'embedded-worker.js')],
  outfile: bundle,
  ...BUNDLE_BASE,
  // DuckDB's binding loads its native library with require(): it stays in node_modules.
  external: ['@duckdb/node-bindings*'],
  // What import.meta.url would be if the bundle were an ES module at the same path.
  inject: [fileURLToPath(new URL('./bundle-shims.mjs', import.meta.url))],
  define: {
    'import.meta.url': '__casImportMetaUrl',
    ...WS_WITHOUT_NATIVE,
  },
  logLevel: 'error',
});

// The code cache: the thread starts a service as commands do (on a throwaway data directory), under
// the CLI's own V8 flags, since V8 refuses a cache made under others; once the service is ready, it
// records the cache of everything compiled so far, start-up included.
const { applyV8Flags } = await import(pathToFileURL(join(dist, '../shared/v8-flags.js')).href);
applyV8Flags();
const dataDir = mkdtempSync(join(tmpdir(), 'cas-build-'));
const worker = new Worker(join(dist, 'embedded-loader.js'), {
  workerData: { dataDir, memoryLimit: '128MB', recordCodeCache: true },
});
try {
  await new Promise((resolve, reject) => {
    worker.on('message', (m) => {
      if (m.ready) worker.postMessage('record-code-cache');
      else if (m.codeCacheRecorded) worker.postMessage('close');
      else if (m.closed) resolve();
      else if (m.failed) reject(new Error(`the bundle's service failed: ${m.failed.message}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the bundle's thread exited (${code}) before it closed`)));
  });
} finally {
  worker.removeAllListeners('exit');
  await worker.terminate();
  rmSync(dataDir, { recursive: true, force: true });
}
