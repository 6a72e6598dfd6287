import type { IntentFilter, UserFilter } from '../../shared/chart-filters.js';
import { cohortCondition, type TermCount, type TraitValue } from '../cohorts/condition.js';
import type { ChartContext } from './context.js';
import { countCondition, eventMatcher, intentMatcher, type Matcher } from './event-filter.js';
import { compileList, countsCte } from './filter-list.js';
import { propertyCondition } from './property-filter.js';
import { personsCte, ScanValues } from './scan.js';
import { all, type Query } from './sql.js';

/**
 * The persons a chart is about: `userFilters` (each filter's fields must all hold; the list combines
 * left to right, `or` by default) and chart-level `shownIntents` (any listed intent shown in its
 * window). Returns a CTE with column `person`, or undefined when nothing narrows the users, so
 * charts without user filters skip the work entirely.
 */
export function userSelection(
  q: Query,
  ctx: ChartContext,
  userFilters: ReadonlyArray<UserFilter> | undefined,
  shownIntents: ReadonlyArray<IntentFilter> | undefined,
): string | undefined {
  const filters = userFilters ?? [];
  const intents = shownIntents ?? [];
  if (filters.length === 0 && intents.length === 0) return undefined;
  const p = q.params;
  const joins: string[] = [];
  const join = (count: number, build: (values: ScanValues) => Matcher[]): string => {
    if (count === 0) return 'TRUE';
    const list = compileList(q, ctx, 'person', build);
    const alias = `a${joins.length}`;
    joins.push(`LEFT JOIN ${list.cte} ${alias} ON ${alias}.key = u.person`);
    return list.predicate(alias);
  };

  // Every event and intent term of the cohorts named is counted in one scan: a join of its own per
  // term made a cohort of 100 event terms too expensive for 2 stored events, and 500 a DuckDB error.
  const termValues = new ScanValues(p);
  const terms: Matcher[] = [];
  const TERMS = 'cohort_terms';
  const term: TermCount = (build) => {
    const m = build(termValues);
    terms.push(m);
    return countCondition(p, `coalesce(${TERMS}.c${terms.length - 1}, 0)`, m.op, m.n);
  };

  // Each trait the filters read is extracted once per person, a column of `u`: inlined at every use,
  // a cohort of 100 terms on one trait extracted it 200 times per person (a probe: 3.6 s and 0.65 GB
  // for 60k users; 400 terms ran out of memory).
  const traitNames: string[] = [];
  const trait: TraitValue = (name) => {
    let i = traitNames.indexOf(name);
    if (i < 0) i = traitNames.push(name) - 1;
    return `nullif(u.trait_value_${i}, 'null')`;
  };

  let combined = '';
  filters.forEach((f, i) => {
    const holds = all([
      f.cohort === undefined
        ? 'TRUE'
        : cohortCondition(p, ctx, f.cohort, `userFilters[${i}].cohort`, term, trait),
      ...(f.with ?? []).map((w) => propertyCondition(p, w, trait(w.property_name))),
      join(f.shown_intents?.length ?? 0, (v) =>
        (f.shown_intents ?? []).map((s) => intentMatcher(p, ctx, s, v)),
      ),
      join(f.performed_events?.length ?? 0, (v) =>
        (f.performed_events ?? []).map((e) => eventMatcher(p, ctx, e, v)),
      ),
    ]);
    if (i === 0) combined = holds;
    else combined = `(${combined}) ${f.combine_previous_operation === 'and' ? 'AND' : 'OR'} (${holds})`;
  });
  const chartIntents = join(intents.length, (v) =>
    intents.map((s) => ({ ...intentMatcher(p, ctx, s, v), combine: 'or' as const })),
  );
  if (terms.length > 0) {
    const counts = countsCte(q, ctx, 'person', terms, termValues, false);
    joins.push(`LEFT JOIN ${counts} ${TERMS} ON ${TERMS}.key = u.person`);
  }
  const where = all([combined === '' ? 'TRUE' : combined, chartIntents]);
  return q.cte(
    'selected',
    `SELECT u.person FROM ${withTraits(q, ctx, traitNames)} u ${joins.join(' ')} WHERE ${where}`,
  );
}

/**
 * The persons with `trait_value_<i>` columns: the JSON of each named trait. A struct unnested in the
 * select list, since DuckDB inlines a plain projection's expressions into the filter above it (and a
 * materialized CTE too, measured): an UNNEST is an operator of its own, evaluated once per row.
 */
function withTraits(q: Query, ctx: ChartContext, names: readonly string[]): string {
  const persons = personsCte(q, ctx);
  if (names.length === 0) return persons;
  const fields = names.map(
    (name, i) => `'trait_value_${i}': json_extract(u.traits, ${q.params.pointer(name)})`,
  );
  return `(SELECT u.*, unnest([{${fields.join(', ')}}], recursive := true) FROM ${persons} u)`;
}

/** `person IN selected`, or nothing when no selection applies. */
export function selectedCondition(selected: string | undefined, person: string): string[] {
  return selected === undefined ? [] : [`${person} IN (SELECT person FROM ${selected})`];
}
