import type { ChartRange, TimeWithin } from '../../shared/chart-filters.js';
import { type Bin, binsOf, resolveInstant } from '../../shared/time-bins.js';
import type { CohortDefinitions } from '../cohorts/store.js';
import type { Queryable } from '../store/database.js';
import { type ChartBudget, ResponseBudget } from './budget.js';
import { DrilldownStore } from './drilldown-store.js';
import { periodBack } from './wall-clock.js';

/** Optional query parameters of spec 4.1 that narrow a chart to one session or conversation. */
export interface ChartScope {
  session_id?: string;
  conversation_id?: string;
}

/** A half-open interval of instants, [lo, hi). */
export interface Window {
  lo: Date;
  hi: Date;
}

/** Everything a chart query needs besides its controls. */
export interface ChartContext {
  db: Queryable;
  project: string;
  range: ChartRange;
  /** The range as instants: events count when lo <= ts < hi. */
  window: Window;
  bins: Bin[];
  /** Bin index by its local start date (YYYY-MM-DD), the key SQL returns for a bin. */
  binIndex: Map<string, number>;
  scope: ChartScope;
  /** Cap of `session_ids` per session-chart point (decisions §2). */
  sessionIdsPerPoint: number;
  /** Where the queries behind drilldown ids are kept. */
  drilldowns: DrilldownStore;
  /** Points and bytes of this response so far. */
  budget: ResponseBudget;
  /** The project's cohorts, loaded when a user filter names one (cohorts/store.ts). */
  cohorts?: CohortDefinitions | undefined;
}

/** For callers without a service (tests, benchmarks): ids work within the process only. */
const memoryDrilldowns = new DrilldownStore();

export interface ContextExtras {
  drilldowns?: DrilldownStore;
  budget?: ChartBudget;
  cohorts?: CohortDefinitions | undefined;
}

export function binKey(bin: Bin): string {
  // startIso is local wall time, so its date part is the calendar date date_trunc yields in SQL.
  return bin.startIso.slice(0, 10);
}

export function makeContext(
  db: Queryable,
  project: string,
  range: ChartRange,
  scope: ChartScope,
  sessionIdsPerPoint: number,
  extras: ContextExtras = {},
): ChartContext {
  const lo = resolveInstant(range.start, range.tz);
  const hi = resolveInstant(range.end, range.tz);
  // The controls schema validated both bounds; this guards a caller that skipped it.
  if (!lo || !hi) throw new RangeError('range bounds must be validated before building a chart');
  // Bins are computed when first read (Intl, some 10 ms for 90 days): the funnel and the
  // distributions never read them.
  let bins: Bin[] | undefined;
  let binIndex: Map<string, number> | undefined;
  return {
    db,
    project,
    range,
    window: { lo, hi },
    get bins() {
      bins ??= binsOf(range);
      return bins;
    },
    get binIndex() {
      binIndex ??= new Map(this.bins.map((b, i) => [binKey(b), i]));
      return binIndex;
    },
    scope,
    sessionIdsPerPoint,
    drilldowns: extras.drilldowns ?? memoryDrilldowns,
    budget: new ResponseBudget(extras.budget),
    cohorts: extras.cohorts,
  };
}

/** The default store of makeContext, for retrieve callers that have no service either. */
export function defaultDrilldowns(): DrilldownStore {
  return memoryDrilldowns;
}

/**
 * The instants a `within` covers (decisions §6): `period` wins and is measured back from range.end;
 * otherwise start/end, a missing side falling back to the range's; no `within` at all is the range.
 * Date-only bounds are days in range.tz, as for the range itself.
 */
export function resolveWithin(within: TimeWithin | undefined, range: ChartRange, chart: Window): Window {
  if (!within) return chart;
  if (within.period) {
    const { number, unit, tz } = within.period;
    return { lo: periodBack(chart.hi, number, unit, tz), hi: chart.hi };
  }
  const lo = within.start === undefined ? chart.lo : resolveInstant(within.start, range.tz);
  const hi = within.end === undefined ? chart.hi : resolveInstant(within.end, range.tz);
  if (!lo || !hi) throw new RangeError('within bounds must be validated before building a chart');
  return { lo, hi };
}

export function intersect(a: Window, b: Window): Window {
  return { lo: a.lo > b.lo ? a.lo : b.lo, hi: a.hi < b.hi ? a.hi : b.hi };
}

/** The smallest window covering all of `windows` (the span one scan must read). */
export function span(windows: ReadonlyArray<Window>, fallback: Window): Window {
  if (windows.length === 0) return fallback;
  let lo = windows[0]!.lo;
  let hi = windows[0]!.hi;
  for (const w of windows) {
    if (w.lo < lo) lo = w.lo;
    if (w.hi > hi) hi = w.hi;
  }
  return { lo, hi };
}
