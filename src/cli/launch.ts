import { fileURLToPath } from 'node:url';
import { bundleIsCurrent, bundleScript } from '../shared/bundle-script.js';
import { applyV8Flags } from '../shared/v8-flags.js';
import { installEarlySignals } from './early-signals.js';

/**
 * bin/cas.js's entry. The build bundles main.ts and everything it imports into one file
 * (scripts/bundle-cli.mjs) and records V8's code cache of it: loading ~300 modules one by one cost
 * every command about 0.3 s of CPU before it did anything (`npm run bench -- startup` times both
 * ways). Where there is no bundle, or one older than main.js (a build stopped half-way, tsc run alone
 * since), the modules load one by one.
 */
const BUNDLE = fileURLToPath(new URL('./main.bundle.cjs', import.meta.url));
const CODE_CACHE = fileURLToPath(new URL('./main.bundle.cache', import.meta.url));
const MAIN = fileURLToPath(new URL('./main.js', import.meta.url));

installEarlySignals();
// Before the bundle compiles: V8 takes a code cache only under the flags it was made with.
applyV8Flags();
if (bundleIsCurrent(BUNDLE, MAIN)) {
  const script = bundleScript(BUNDLE, CODE_CACHE);
  // The build's recording run: the cache then holds what that command compiled, start-up included.
  if (process.env.CAS_BUILD_RECORD_CODE_CACHE === '1') process.on('exit', () => script.recordCodeCache());
  script.run();
} else {
  await import('./main.js');
}
