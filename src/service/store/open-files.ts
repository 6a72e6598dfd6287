import { readFileSync } from 'node:fs';

/**
 * The fewest files the process must be allowed to open before the store is used. DuckDB opens its
 * temporary files as it spills and checkpoints; one it could not open (`ulimit -n 32`, an import of
 * 40,000 turns) ended in "FATAL Error: Failed to create checkpoint", and the store held events twice
 * and users missing after the next run (found by probing). macOS shells allow 256 by default.
 */
export const MIN_OPEN_FILES = 128;

/** The soft limit on open files (`ulimit -n`), where the system says it (Linux); else undefined. */
export function openFilesLimit(limits = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(limits, 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined || soft === 'unlimited') return undefined;
  const n = Number(soft);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Why the store must not be opened under this limit, or undefined when it may. */
export function tooFewOpenFiles(limit = openFilesLimit()): string | undefined {
  if (limit === undefined || limit >= MIN_OPEN_FILES) return undefined;
  return `only ${limit} files may be open at once, under ulimit -n; the database needs ${MIN_OPEN_FILES} to write safely`;
}
