import { ALL_USERS, type EventFilter, type IntentFilter } from '../../shared/chart-filters.js';
import type { CohortTerm, CohortTermFilter } from '../../shared/cohorts.js';
import type { ChartContext } from '../charts/context.js';
import { eventMatcher, intentMatcher, type Matcher } from '../charts/event-filter.js';
import { jsonValue, propertyCondition } from '../charts/property-filter.js';
import type { ScanValues } from '../charts/scan.js';
import { all, type Params } from '../charts/sql.js';
import { invalidInput } from '../errors.js';
import { refuseLarge } from './size.js';

/**
 * How user-selection.ts counts one event or intent term among all the cohorts' terms (one scan for
 * them all) and gets its per-person predicate.
 */
export type TermCount = (build: (values: ScanValues) => Matcher) => string;

/** The SQL of a person's (row `u`'s) trait by name, as user-selection.ts reads traits. */
export type TraitValue = (name: string) => string;

type Counting = Extract<CohortTermFilter, { type: 'event' | 'intent' }>;

function counting(f: Counting) {
  return {
    ...(f.with === undefined ? {} : { with: f.with }),
    ...(f.within === undefined ? {} : { within: f.within }),
    number_of: f.number_of,
    number_of_operator: f.number_of_operator,
    combine_previous_operation: 'and' as const,
  };
}

/**
 * A cohort as a condition on a person row `u` (columns person, traits) of the `selected` query: each
 * term is exactly what the same filter inline in a UserFilter compiles to (an event term is a
 * `performed_events` filter, an intent term a `shown_intents` filter, a trait term `with`), combined
 * left to right with the terms' operators, nested cohorts inlined.
 */
export function cohortCondition(
  p: Params,
  ctx: ChartContext,
  given: string,
  path: string,
  term: TermCount,
  trait: TraitValue = (trait) => jsonValue(p, 'u.traits', trait),
  seen: ReadonlySet<string> = new Set(),
): string {
  // Names are stored trimmed (shared/cohorts.ts), so they are looked up trimmed.
  const name = given.trim();
  if (name === ALL_USERS) return 'TRUE';
  const terms: readonly CohortTerm[] | undefined = ctx.cohorts?.get(name);
  if (!terms) throw invalidInput([{ path, message: `unknown cohort "${name}"` }]);
  // Definitions are checked for cycles when saved; this guards a store edited by hand.
  if (seen.has(name)) throw invalidInput([{ path, message: `cohort "${name}" contains itself` }]);
  if (seen.size === 0) {
    const large = refuseLarge(name, ctx.cohorts, path);
    if (large) throw invalidInput([large]);
  }
  const inner = new Set([...seen, name]);
  let combined = '';
  terms.forEach((t, i) => {
    const f = t.termFilter;
    let holds: string;
    if (f.type === 'trait') {
      holds = all(f.with.map((w) => propertyCondition(p, w, trait(w.property_name))));
    } else if (f.type === 'event') {
      const filter: EventFilter = { event_name: f.event_name, ...counting(f) };
      holds = term((v) => eventMatcher(p, ctx, filter, v));
    } else if (f.type === 'intent') {
      const filter: IntentFilter = { intent: f.intent, ...counting(f) };
      holds = term((v) => intentMatcher(p, ctx, filter, v));
    } else {
      holds = cohortCondition(p, ctx, f.name, path, term, trait, inner);
    }
    combined = i === 0 ? holds : `(${combined}) ${t.operator === 'or' ? 'OR' : 'AND'} (${holds})`;
  });
  return combined === '' ? 'TRUE' : combined;
}
