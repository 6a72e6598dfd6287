// Part of `npm run build`, after tsc and bundle-worker.mjs: the CLI (dist/cli/main.js and the ~300
// modules it imports: commander, undici, zod, the commands, the importer, the renderers) bundled into
// one CommonJS file, and V8's code cache of it, which bin/cas.js runs through dist/cli/launch.js.
// Loading the modules one by one cost every command about 0.3 s of CPU (resolution, and
// cjs-module-lexer reading each CommonJS dependency an ES module imports); `npm run bench -- startup`
// times both ways. The modules a command does
// not need stay unevaluated: esbuild turns each dynamic import() into a lazily run part of the file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_BASE, WS_WITHOUT_NATIVE } from './bundle-common.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const bundle = join(dist, 'cli', 'main.bundle.cjs');
const cache = join(dist, 'cli', 'main.bundle.cache');

// Modules that find files beside themselves (the service's and the reader's worker entries, ECharts'
// browser build) keep doing so from their own place in dist/: each one's import.meta.url becomes its
// file's URL, reckoned from where the bundle lies (bundle-shims.mjs; not with the module's own
// `require`, which may be a local it has not yet initialised there).
const FILE_URL = '__casFileUrl';
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/].+\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const path = relative(dirname(bundle), args.path).split('\\').join('/');
      return {
        contents: text.replaceAll('import.meta.url', `${FILE_URL}(${JSON.stringify(path)})`),
        loader: 'js',
      };
    });
  },
};

rmSync(cache, { force: true });
await build({
  entryPoints: [join(dist, 'cli', 'main.js')],
  outfile: bundle,
  ...BUNDLE_BASE,
  // DuckDB's binding loads its native library with require(): it stays in node_modules.
  external: ['@duckdb/node-bindings*'],
  plugins: [ownImportMetaUrl],
  inject: [fileURLToPath(new URL('./bundle-shims.mjs', import.meta.url))],
  define: WS_WITHOUT_NATIVE,
  logLevel: 'error',
});

// The code cache: one command that starts the embedded service and prints a result, run as a user
// would (bin/cas.js, the CLI's own V8 flags) on a throwaway data directory; on exit it records what
// it compiled. Commands that compile more compile the rest as they would have anyway.
const dataDir = mkdtempSync(join(tmpdir(), 'cas-build-'));
try {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(CAS_|XDG_)/.test(key)));
  const run = spawnSync(process.execPath, [join(root, 'bin', 'cas.js'), 'users', 'list', '--json'], {
    env: {
      ...env,
      CAS_DATA_DIR: dataDir,
      CAS_BUILD_RECORD_CODE_CACHE: '1',
      XDG_CONFIG_HOME: join(dataDir, 'no-config'),
    },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (run.status !== 0 || !existsSync(cache)) {
    throw new Error(`the CLI bundle's recording run failed (${run.status}): ${run.stderr || run.error}`);
  }
  JSON.parse(run.stdout);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
