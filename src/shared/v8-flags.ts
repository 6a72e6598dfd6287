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
 * Applies the CLI's V8 flags to this process. The build applies them too before it records the
 * embedded service's code cache (scripts/bundle-worker.mjs): V8 refuses a cache made under other flags.
 */
export function applyV8Flags(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
