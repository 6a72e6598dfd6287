import { ALL_USERS } from '../../shared/chart-filters.js';
import type { CohortTerm } from '../../shared/cohorts.js';
import type { Issue } from '../../shared/errors.js';
import type { CohortDefinitions } from './store.js';

/**
 * Terms and property filters a cohort may compile to once its nested cohorts are inlined. Each level
 * multiplies the query: four cohorts of 100 terms, each naming the one before a hundred times, were
 * 10^6 terms, and one evaluation of them grew the service past 13 GB (DuckDB's memory limit does not
 * bound the planner). A term's filters count too: 100 terms of 100 regexes each planned for 22 s,
 * past every budget (found by probing; database.ts MAX_READ_STATEMENT bounds what any chart sends).
 */
export const MAX_COHORT_SIZE = 1_000;

/** The inlined size (terms and filters) of `name` under `defs`, counted no further than past the limit. */
export function expandedTerms(
  name: string,
  defs: CohortDefinitions,
  memo: Map<string, number> = new Map(),
  open: Set<string> = new Set(),
): number {
  const known = memo.get(name);
  if (known !== undefined) return known;
  const terms = defs.get(name);
  // All Users, an unknown name and a cycle are one term here: the callers refuse those themselves.
  if (name === ALL_USERS || !terms || open.has(name)) return 1;
  open.add(name);
  let n = 0;
  for (const t of terms) {
    const f = t.termFilter;
    // A nested cohort counts as what it inlines; any other term as itself and each of its filters.
    n += f.type === 'cohort' ? expandedTerms(f.name, defs, memo, open) : 1 + (f.with?.length ?? 0);
    if (n > MAX_COHORT_SIZE) break;
  }
  open.delete(name);
  memo.set(name, n);
  return n;
}

const tooLarge = (what: string) =>
  `${what} more than ${MAX_COHORT_SIZE.toLocaleString('en-US')} terms and filters once nested cohorts are inlined; nest fewer times, name fewer cohorts, or give fewer filters`;

/** Saving `name` as `terms` must leave every cohort, this one and those containing it, within the limit. */
export function sizeIssues(name: string, terms: readonly CohortTerm[], defs: CohortDefinitions): Issue[] {
  const after = new Map(defs);
  after.set(name, terms);
  const memo = new Map<string, number>();
  if (expandedTerms(name, after, memo) > MAX_COHORT_SIZE)
    return [{ path: 'terms', message: tooLarge('this cohort would be') }];
  const grown = [...after.keys()].filter(
    (other) => other !== name && expandedTerms(other, after, memo) > MAX_COHORT_SIZE,
  );
  return grown.length === 0
    ? []
    : [
        {
          path: 'terms',
          message: tooLarge(
            `cohort ${grown.map((g) => `"${g}"`).join(', ')}, which contains this one, would be`,
          ),
        },
      ];
}

/** A chart or evaluation naming a cohort over the limit (saved before it, or a store edited by hand): 400. */
export function refuseLarge(
  name: string,
  defs: CohortDefinitions | undefined,
  path: string,
): Issue | undefined {
  if (!defs || expandedTerms(name, defs) <= MAX_COHORT_SIZE) return undefined;
  return { path, message: tooLarge(`cohort "${name}" is`) };
}
