// Part of `npm run build`, after tsc: the embedded service's thread (dist/service/embedded-worker.js
// and the ~400 modules it imports: fastify, zod schemas, the ingest core, the charts) bundled into one
// file beside it. Loading them one by one cost each command that starts the embedded service about
// 0.7 s of CPU (module resolution, and cjs-module-lexer reading every CommonJS dependency an ES module
// imports), before DuckDB even opened; one file loads in a third of that. embedded.ts starts the
// bundle when it is there, and the unbundled entry otherwise (as under vitest, which runs src/).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/service/', import.meta.url));

await build({
  entryPoints: [join(dist, 'embedded-worker.js')],
  outfile: join(dist, 'embedded-worker.bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // DuckDB's binding loads its native library with require(): it stays in node_modules.
  external: ['@duckdb/node-bindings*'],
  // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own.
  banner: {
    js: "import { createRequire as __casCreateRequire } from 'node:module'; const require = __casCreateRequire(import.meta.url);",
  },
  // ws's optional native speed-ups are not dependencies; asking for them only costs a failed lookup.
  define: {
    'process.env.WS_NO_BUFFER_UTIL': '"1"',
    'process.env.WS_NO_UTF_8_VALIDATE': '"1"',
  },
  legalComments: 'none',
  logLevel: 'error',
});
