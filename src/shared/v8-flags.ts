import { setFlagsFromString } from 'node:v8';

/**
 * V8 lets a heap grow to about four times what survives a full collection while collecting is cheap.
 * An import keeps about 40 MB live on its own thread and as much on the embedded service's thread
 * (which shares these flags), so each heap grew to about 200 MB. Capping growth at twice the live size
 * took a 1M-record import from 756 to 640 MB peak RSS at the same speed (`npm run bench -- import`);
 * at 1.5 times it saved 37 MB more but ran 5-8% slower.
 */
const HEAP_GROWING_PERCENT = 100;

/**
 * undici parses HTTP answers with llhttp compiled to WebAssembly, and V8 (11.3, Node 20) compiled that
 * module with its optimizing compiler on background threads as soon as the first client was made:
 * ~15% of the CPU of a small `cas import` in a `perf` profile, in every command that talks HTTP, the
 * embedded service's included (`--no-wasm-tier-up` did not stop it). Its baseline compiler, Liftoff,
 * is enough: `cas users list` 0.55 → 0.44 s of CPU, a 157-row import 0.88 → 0.71 s (medians of 15
 * alternated runs each), and a 20 MB answer read through undici took as long (8 runs each, chunked
 * and not). V8 lists the flag among its testing flags; every HTTP exchange of the test suite and of
 * `npm run bench` runs under it.
 */
const WASM_FLAGS = '--liftoff-only';

/**
 * Applies the CLI's V8 flags to this process. The build applies them too before it records the
 * embedded service's code cache (scripts/bundle-worker.mjs): V8 refuses a cache made under other flags.
 */
export function applyV8Flags(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  setFlagsFromString(WASM_FLAGS);
}
