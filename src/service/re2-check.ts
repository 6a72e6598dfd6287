import type { Queryable } from './store/database.js';

/**
 * Why RE2 refuses a pattern, or undefined if it takes it. Asked of DuckDB itself, the engine that will
 * run the pattern: a refusal found only when the query ran was the service's 500, not the caller's 400.
 */
export async function re2Problem(
  db: Queryable,
  pattern: string,
  /** DuckDB's regex options, as the query that runs the pattern passes them (`'i'`). */
  options?: string,
): Promise<string | undefined> {
  try {
    if (options === undefined) await db.run(`SELECT regexp_matches('', $1)`, [pattern]);
    else await db.run(`SELECT regexp_matches('', $1, $2)`, [pattern, options]);
    return undefined;
  } catch (error) {
    const detail = error instanceof Error ? (error.message.split('\n')[0] ?? '') : '';
    return `not a valid RE2 regular expression${detail ? ` (${detail.replace(/^[^:]*Error: /, '')})` : ''}`;
  }
}
