import type {
  ChartRange,
  EventFilter,
  IntentFilter,
  PropertyFilter,
  TimeWithin,
  UserFilter,
} from '../../shared/chart-filters.js';
import type { Issue } from '../../shared/errors.js';
import { resolveInstant } from '../../shared/time-bins.js';
import { invalidInput } from '../errors.js';
import { re2Problem } from '../re2-check.js';
import type { Queryable } from '../store/database.js';

/**
 * Checks the chart schema cannot make (decisions §6), each naming the JSON path: regexes RE2 rejects (asked of DuckDB itself, the engine that will run them), zones
 * DuckDB does not know, and `within` bounds that only order once resolved in range.tz.
 */

/** The filter-bearing fields any chart's controls may have. */
export interface FilterFields {
  range: ChartRange;
  eventFilters?: EventFilter[] | undefined;
  startingEvent?: EventFilter | undefined;
  returnEvents?: EventFilter[] | undefined;
  userFilters?: UserFilter[] | undefined;
  shownIntents?: IntentFilter[] | undefined;
  /** The sentiment analysis' intent filter. */
  intentFilter?: IntentFilter | undefined;
}

type Counted = { with?: PropertyFilter[] | undefined; within?: TimeWithin | undefined };

function* counted(c: FilterFields): Generator<[string, Counted]> {
  for (const [i, f] of (c.eventFilters ?? []).entries()) yield [`eventFilters[${i}]`, f];
  if (c.startingEvent) yield ['startingEvent', c.startingEvent];
  for (const [i, f] of (c.returnEvents ?? []).entries()) yield [`returnEvents[${i}]`, f];
  for (const [i, f] of (c.shownIntents ?? []).entries()) yield [`shownIntents[${i}]`, f];
  if (c.intentFilter) yield ['intentFilter', c.intentFilter];
  for (const [i, u] of (c.userFilters ?? []).entries()) {
    for (const [j, f] of (u.shown_intents ?? []).entries())
      yield [`userFilters[${i}].shown_intents[${j}]`, f];
    for (const [j, f] of (u.performed_events ?? []).entries()) {
      yield [`userFilters[${i}].performed_events[${j}]`, f];
    }
  }
}

function* propertyFilters(c: FilterFields): Generator<[string, PropertyFilter]> {
  for (const [path, f] of counted(c)) {
    for (const [k, w] of (f.with ?? []).entries()) yield [`${path}.with[${k}]`, w];
  }
  for (const [i, u] of (c.userFilters ?? []).entries()) {
    for (const [k, w] of (u.with ?? []).entries()) yield [`userFilters[${i}].with[${k}]`, w];
  }
}

const knownZones = new Map<string, boolean>();

async function zoneKnown(db: Queryable, tz: string): Promise<boolean> {
  let known = knownZones.get(tz);
  if (known === undefined) {
    known = await db
      .run(`SELECT TIMESTAMPTZ '2000-01-01 00:00:00+00' AT TIME ZONE $1`, [tz])
      .then(() => true)
      .catch(() => false);
    // Only known zones are cached: caching misses would let a stream of made-up names grow the map.
    if (known) knownZones.set(tz, known);
  }
  return known;
}

export async function chartIssues(db: Queryable, c: FilterFields): Promise<Issue[]> {
  const issues: Issue[] = [];
  if (!(await zoneKnown(db, c.range.tz))) issues.push({ path: 'range.tz', message: 'unknown time zone' });
  // Cohort names are checked where the chart compiles them, against the project's cohorts.
  for (const [path, f] of propertyFilters(c)) {
    if (f.operator !== 'regex' && f.operator !== 'not_regex') continue;
    const problem = await re2Problem(db, String(f.values[0]));
    if (problem) issues.push({ path: `${path}.values[0]`, message: problem });
  }
  for (const [path, f] of counted(c)) {
    const w = f.within;
    if (!w) continue;
    if (w.period) {
      if (!(await zoneKnown(db, w.period.tz))) {
        issues.push({ path: `${path}.within.period.tz`, message: 'unknown time zone' });
      }
    } else if (w.start !== undefined && w.end !== undefined) {
      const lo = resolveInstant(w.start, c.range.tz);
      const hi = resolveInstant(w.end, c.range.tz);
      if (lo && hi && lo >= hi) issues.push({ path: `${path}.within`, message: 'start must be before end' });
    }
  }
  return issues;
}

/** Throws the 400 for the first failing checks, all issues listed. */
export async function assertChartValid(db: Queryable, c: FilterFields): Promise<void> {
  const issues = await chartIssues(db, c);
  if (issues.length > 0) throw invalidInput(issues);
}
