import { findJsonProblem, LONE_SURROGATE_MESSAGE } from '../shared/json-problem.js';

/** A `\uD800`-`\uDFFF` escape in JSON text: the only way JSON text can hold a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Where a value parsed from JSON `text` holds a lone UTF-16 surrogate, as "path: reason", or
 * undefined. The service refuses such text (400 naming its path), but the embedded service's import
 * hands it events without the HTTP body parser, so one was stored and every later read of its
 * property or trait failed in DuckDB (found by probing). The walk runs only for text with a surrogate
 * escape (pairs too: Python writes every emoji that way).
 */
export function loneSurrogateProblem(text: string, value: unknown): string | undefined {
  if (!SURROGATE_ESCAPE.test(text)) return undefined;
  const found = findJsonProblem(value, { keys: false, strings: true });
  if (found === undefined) return undefined;
  return found.path === '' ? LONE_SURROGATE_MESSAGE : `${found.path}: ${LONE_SURROGATE_MESSAGE}`;
}
