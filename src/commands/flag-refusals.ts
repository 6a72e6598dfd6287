import { HttpError } from '../client/errors.js';
import { UsageError } from './errors.js';

/**
 * A 400 about values the user typed into flags is a usage error (cli.md: exit 2, the offending flag
 * named), not the service refusing a request of ours (exit 8). Regexes are where it happens: only the
 * service's RE2 can judge one, so the CLI learns of a bad `--like` or `--pattern` from the answer.
 * `flagOf` names the flag behind an issue's path (`regex`, `patterns[1]`, `eventFilters[0].with[0]…`),
 * or nothing when the value did not come from a flag (a `--controls` file): then the refusal stays
 * the service's, exit 8.
 */
export async function namingFlags<T>(
  send: () => Promise<T>,
  flagOf: (path: string) => string | undefined,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 400) throw error;
    const issues = error.issues ?? [];
    if (issues.length === 0) throw error;
    const named = issues.map((issue) => ({ flag: flagOf(issue.path), issue }));
    if (named.some((n) => n.flag === undefined)) throw error;
    const [first] = named;
    const more = named.length > 1 ? ` (and ${named.length - 1} more)` : '';
    throw new UsageError(`${first?.flag}: ${first?.issue.message}${more}`);
  }
}

/** `--pattern "a("` for `patterns[1]`: the n-th value of a repeated flag, named with its value. */
export function nthFlag(
  flag: string,
  key: string,
  values: readonly string[] | undefined,
  path: string,
): string | undefined {
  if (!path.startsWith(`${key}[`)) return undefined;
  const value = values?.[Number.parseInt(path.slice(key.length + 1), 10)];
  return value === undefined ? undefined : `${flag} "${value}"`;
}
