import { statSync } from 'node:fs';

/**
 * Inputs from this size up get the embedded service on a thread of its own. Smaller ones import
 * faster on one thread: starting Node in a second thread and loading the service there again cost
 * more than the overlap won. Sorted turns, fresh store, runs alternated by hand (`npm run bench` has no
 * row for it: its inputs are all 20 MB and more); wall s, CPU s, peak RSS MB:
 * - 3,000 turns (0.6 MB): one thread 1.93/1.95, 2.7 CPU, 197 MB; two 1.96/2.09, 2.9-3.1 CPU, 244 MB
 * - 10,000 (2 MB): one 2.83/2.92, 3.9-4.1, 239 MB; two 3.15/3.20, 4.7-4.8, 295 MB
 * - 20,000 (4 MB): one 4.67/4.73, 6.3-6.5, 280 MB; two 4.10/4.66, 6.1-6.8, 346 MB
 * - 60,000 (12 MB): one 10.8/11.2, 13.9-14.9, 328 MB; two 10.2/10.4, 14.8-15.4, 432 MB
 */
export const OWN_THREAD_MIN_BYTES = 4 * 1024 * 1024;

/** A gzipped export of chat text is typically 5-10x smaller than the text. */
const GZIP_RATIO = 8;

/**
 * Whether an import of `paths` should run the embedded service on a thread of its own: standard
 * input, whose size is unknown, does; a file that cannot be read counts as empty (the import then
 * fails on it with its own error).
 */
export function importNeedsOwnThread(paths: readonly string[]): boolean {
  let bytes = 0;
  for (const path of paths) {
    if (path === '-') return true;
    try {
      const { size } = statSync(path);
      bytes += /\.gz$/i.test(path) ? size * GZIP_RATIO : size;
    } catch {
      // Counted as empty, see above.
    }
  }
  return bytes >= OWN_THREAD_MIN_BYTES;
}
