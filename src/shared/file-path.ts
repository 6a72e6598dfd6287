import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * One name for a file however a caller wrote its path (symlinks, `..`, relative): its real path, or,
 * where it does not exist yet, the path resolved.
 */
export function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
