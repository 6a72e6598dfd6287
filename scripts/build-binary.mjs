// `npm run build:binary`: one executable for this platform with Node's own single-executable
// support (what `pkg --sea` does), which works offline — classic pkg downloads patched Node binaries.
// Steps: bundle the CLI to one CommonJS file (esbuild) → SEA blob (node --experimental-sea-config)
// → copy this node binary and inject the blob (postject) → put DuckDB's native library beside it.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_BASE, WS_WITHOUT_NATIVE } from './bundle-common.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const out = join(root, 'dist');
const work = join(out, 'sea');
const platform = `${process.platform}-${process.arch}`;
const binary = join(out, `cas-${platform}${process.platform === 'win32' ? '.exe' : ''}`);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// DuckDB's binding picks `@duckdb/node-bindings-<platform>/duckdb.node` with require(); inside a
// single executable require() reaches only built-ins, so the native file is loaded from beside the
// executable instead (it finds its libduckdb next to itself through its rpath).
const nativeShim = {
  name: 'duckdb-native-beside-executable',
  setup(b) {
    b.onResolve({ filter: /^@duckdb\/node-bindings-[^/]+\/duckdb\.node$/ }, (args) => ({
      path: args.path,
      namespace: 'duckdb-native',
    }));
    b.onLoad({ filter: /.*/, namespace: 'duckdb-native' }, () => ({
      contents: `
        const { createRequire } = require('node:module');
        const { dirname, join } = require('node:path');
        module.exports = createRequire(process.execPath)(join(dirname(process.execPath), 'duckdb.node'));`,
      loader: 'js',
    }));
  },
};

// `cas report` inlines ECharts' browser build, which render/html/chart-library.ts reads from
// node_modules at run time; the executable has none, so that module is replaced by the text itself.
const chartLibraryText = {
  name: 'chart-library-as-text',
  setup(b) {
    b.onLoad({ filter: /[\\/]render[\\/]html[\\/]chart-library\.ts$/ }, () => {
      const file = join(dirname(require.resolve('echarts')), 'echarts.min.js');
      const text = JSON.stringify(readFileSync(file, 'utf8'));
      return { contents: `export function chartLibrary() { return ${text}; }`, loader: 'js' };
    });
  },
};

await build({
  entryPoints: [join(root, 'src/cli/main.ts')],
  outfile: join(work, 'cas.cjs'),
  ...BUNDLE_BASE,
  minify: true,
  plugins: [nativeShim, chartLibraryText],
  // Inside a single executable ws's require() of its optional speed-ups would warn on every run.
  define: WS_WITHOUT_NATIVE,
  logLevel: 'warning',
});

const seaConfig = join(work, 'sea-config.json');
writeFileSync(
  seaConfig,
  JSON.stringify({
    main: join(work, 'cas.cjs'),
    output: join(work, 'cas.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
  }),
);
execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: 'inherit' });

copyFileSync(process.execPath, binary);
chmodSync(binary, 0o755);
const postject = join(dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
execFileSync(
  process.execPath,
  [
    postject,
    binary,
    'NODE_SEA_BLOB',
    join(work, 'cas.blob'),
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ...(process.platform === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : []),
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);

const bindings = dirname(require.resolve(`@duckdb/node-bindings-${platform}/package.json`));
for (const file of [
  'duckdb.node',
  process.platform === 'darwin'
    ? 'libduckdb.dylib'
    : process.platform === 'win32'
      ? 'duckdb.dll'
      : 'libduckdb.so',
]) {
  try {
    copyFileSync(join(bindings, file), join(out, file));
  } catch {
    // Not every platform ships a separate library file.
  }
}
console.log(`built ${binary} (+ duckdb.node and its library beside it)`);
