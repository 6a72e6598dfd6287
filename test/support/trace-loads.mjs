// Preloaded with `node --import`: records every module URL the program loads into $CAS_TRACE_FILE,
// so a test can prove which stacks a command path pulls in.
import { register } from 'node:module';

register('./trace-loads-hooks.mjs', import.meta.url, { data: { file: process.env.CAS_TRACE_FILE } });
