import type { CohortShow } from '../commands/cohorts.js';
import type { PropertyFilter } from '../shared/chart-filters.js';
import type { CohortRecord, CohortTerm } from '../shared/cohorts.js';
import { type ListingOptions, renderListing } from './listing.js';
import { json, keyValueTable, type OutputFormat } from './output.js';

/** `cas cohorts list|show|create|delete`: each term written back in the flags' own grammar. */

const SYMBOL: Readonly<Record<string, string>> = {
  eq: '=',
  neq: '!=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  in: 'in',
  nin: 'not in',
  between: 'between',
  regex: '~',
  not_regex: '!~',
  case_insensitive_eq: '=i',
  case_insensitive_neq: '!=i',
};

const value = (v: unknown) => (typeof v === 'string' && /[\s,]/.test(v) ? `'${v}'` : String(v));

export function filterText(f: PropertyFilter): string {
  return `${f.property_name} ${SYMBOL[f.operator] ?? f.operator} ${f.values.map(value).join(',')}`;
}

const wheres = (filters: readonly PropertyFilter[] | undefined) =>
  filters && filters.length > 0 ? ` where ${filters.map(filterText).join(' and ')}` : '';

const count = (n: number, op: string) => (n === 1 && op === 'gte' ? '' : ` ${SYMBOL[op] ?? op} ${n}`);

export function termText(term: CohortTerm): string {
  const t = term.termFilter;
  switch (t.type) {
    case 'trait':
      return t.with.map(filterText).join(' and ');
    case 'event':
      return `performed "${t.event_name}"${count(t.number_of, t.number_of_operator)}${wheres(t.with)}`;
    case 'intent':
      return `intent "${t.intent}"${count(t.number_of, t.number_of_operator)}${wheres(t.with)}`;
    case 'cohort':
      return `in cohort "${t.name}"`;
  }
}

export function termsText(terms: readonly CohortTerm[]): string {
  return terms.map((term, i) => (i === 0 ? termText(term) : `${term.operator} ${termText(term)}`)).join(' ');
}

export function renderCohortList(
  cohorts: CohortRecord[],
  format: OutputFormat,
  options: ListingOptions,
): string {
  return renderListing(
    cohorts,
    {
      columns: ['name', 'cohort_id', 'terms', 'created_at'],
      rows: cohorts.map((c) => [c.name, c.cohort_id, termsText(c.terms), c.created_at]),
      empty: 'no cohorts',
      records: cohorts,
    },
    format,
    options,
  );
}

function record(c: CohortRecord): Record<string, unknown> {
  return {
    name: c.name,
    cohort_id: c.cohort_id,
    description: c.description ?? '',
    terms: termsText(c.terms),
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

export function renderCohort(cohort: CohortRecord, format: OutputFormat, options: ListingOptions): string {
  if (format === 'table') return keyValueTable(record(cohort), options);
  if (format === 'json') return json(cohort);
  return renderCohortList([cohort], format, options);
}

export function renderCohortShow(show: CohortShow, format: OutputFormat, options: ListingOptions): string {
  const members = {
    columns: ['id', 'user_id', 'traits'],
    rows: show.members.map((u) => [
      u.id,
      u.user_id,
      Object.entries(u.traits)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', '),
    ]),
    empty: 'no members',
    records: show.members,
    ...(show.members.length === show.members_limit
      ? { note: `the first ${show.members_limit} members (--members n for more)` }
      : { note: `${show.members.length} members` }),
  };
  if (format !== 'table') return renderListing(show, members, format, options);
  return `${keyValueTable(record(show.cohort), options)}${renderListing(show, members, format, options)}`;
}
