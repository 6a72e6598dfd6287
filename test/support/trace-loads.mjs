// Preloaded with `node --import`: records into $CAS_TRACE_FILE every module URL the program loads as
// an ES module, and every `require` it makes (`require:<id>`: the one-file bundles the build makes
// load their native and built-in dependencies that way), so a test can prove which stacks a command
// path pulls in.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.CAS_TRACE_FILE;
register('./trace-loads-hooks.mjs', import.meta.url, { data: { file } });

const load = Module._load;
Module._load = function tracedLoad(request, ...rest) {
  if (file) appendFileSync(file, `require:${request}\n`);
  return load.call(this, request, ...rest);
};
