// What the build's bundles share (bundle-cli.mjs, bundle-worker.mjs, build-binary.mjs): one CommonJS
// file for Node 20, since Node 20 can give a code cache only to a script, not to an ES module.
export const BUNDLE_BASE = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  legalComments: 'none',
  // No comments or indentation: esbuild keeps comments as written, and one non-ASCII character
  // anywhere makes V8 hold the whole source as two bytes a character (by hand, V8's heap statistics
  // after `--help`: the CLI bundle's 6 MB took 12 MB, twice over while it compiled). Names stay, so
  // stack traces stay readable.
  minifyWhitespace: true,
};

// ws tries require('bufferutil') and require('utf-8-validate') (optional native speed-ups, not our
// dependencies) when it loads: its own switches turn the failed lookups off.
export const WS_WITHOUT_NATIVE = {
  'process.env.WS_NO_BUFFER_UTIL': '"1"',
  'process.env.WS_NO_UTF_8_VALIDATE': '"1"',
};
