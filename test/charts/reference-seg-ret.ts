import type { ChartScope } from '../../src/service/charts/context.js';
import type { RetentionControls, SegmentationControls } from '../../src/shared/chart-controls.js';
import type {
  RetentionCell,
  RetentionResult,
  SegmentationResult,
  SegPoint,
} from '../../src/shared/chart-responses.js';
import type { SeedData } from '../helpers/seed.js';
import {
  countHolds,
  groupLabel,
  groupOfValue,
  listedOf,
  lookup,
  present,
  shownKeys,
} from './reference-values.js';
import { type RefEvent, World } from './reference-world.js';

/** Brute-force segmentation and retention straight from decisions §6, for property tests. */

const implied = (op: string, n: number) => (op === 'gte' && n <= 1) || (op === 'gt' && n === 0);

export function referenceSegmentation(data: SeedData, c: SegmentationControls, scope: ChartScope = {}) {
  const w = new World(data, c.range, scope);
  const selected = w.selection(c.userFilters, c.shownIntents);
  return c.eventFilters.map((f): SegmentationResult => {
    const item = w.eventItem(f);
    const lo = Math.max(item.window.lo, w.range.lo);
    const hi = Math.min(item.window.hi, w.range.hi);
    const counts = new Map<string, number>();
    for (const e of w.events) {
      if (e.person !== null && e.t >= item.window.lo && e.t < item.window.hi && item.match(e)) {
        counts.set(e.person, (counts.get(e.person) ?? 0) + 1);
      }
    }
    const listed = listedOf(f.groupBy?.property_values);
    const facts: Array<{ e: RefEvent; bin: number; key: string | undefined }> = [];
    for (const e of w.events) {
      if (e.t < lo || e.t >= hi || !item.match(e)) continue;
      if (e.person === null) {
        if (selected !== undefined || !implied(item.op, item.n)) continue;
      } else if (
        selected?.has(e.person) === false ||
        !countHolds(counts.get(e.person) ?? 0, item.op, item.n)
      ) {
        continue;
      }
      const key = f.groupBy
        ? groupOfValue(lookup(e.properties, e.traits, f.groupBy.property_name), listed)
        : '';
      if (key === undefined) continue;
      facts.push({ e, bin: w.binOf(e.t)!, key });
    }
    const pointsOf = (key: string): SegPoint[] =>
      w.bins.map((bin, b) => {
        const here = facts.filter((x) => x.bin === b && x.key === key);
        const total = here.length;
        const unique = new Set(here.map((x) => x.e.person).filter((p) => p !== null)).size;
        return {
          start: bin.startIso,
          end: bin.endIso,
          total,
          unique,
          average: unique === 0 ? 0 : total / unique,
        };
      });
    if (!f.groupBy) {
      const points = pointsOf('');
      const n = points.length;
      return {
        event_name: f.event_name,
        points,
        highlights: {
          average_events: points.reduce((s, p) => s + p.total, 0) / n,
          average_unique_users: points.reduce((s, p) => s + p.unique, 0) / n,
        },
      };
    }
    const weights = new Map<string, number>();
    for (const x of facts) weights.set(x.key!, (weights.get(x.key!) ?? 0) + 1);
    const keys = shownKeys(weights, listed);
    return {
      event_name: f.event_name,
      groups: keys.map((key) => ({
        group: groupLabel(key, listed),
        points: pointsOf(key),
      })),
    };
  });
}

function retentionTable(
  w: World,
  cohort: ReadonlyMap<string, number>,
  returns: ReadonlyMap<string, Set<number>>,
) {
  const n = w.bins.length;
  const size = (i: number) => [...cohort.values()].filter((b) => b === i).length;
  const rows: RetentionCell[][] = [];
  for (let i = 0; i < n; i++) {
    const row: RetentionCell[] = [];
    for (let j = 0; i + j < n; j++) {
      const members = [...cohort.entries()].filter(([, b]) => b === i).map(([p]) => p);
      const count = j === 0 ? members.length : members.filter((p) => returns.get(p)?.has(i + j)).length;
      const bin = w.bins[i + j]!;
      row.push({
        start: bin.startIso,
        end: bin.endIso,
        count,
        percent: size(i) === 0 ? 0 : (100 * count) / size(i),
      });
    }
    rows.push(row);
  }
  const column_headers = w.bins.map((_, j) => {
    const reaching = rows.filter((r) => r.length > j);
    const count = reaching.reduce((s, r) => s + r[j]!.count, 0);
    const base = reaching.reduce((s, r) => s + r[0]!.count, 0);
    return { count, average: base === 0 ? 0 : (100 * count) / base };
  });
  const row_headers = rows.map((r) => r[0]!.count);
  return { rows, column_headers, row_headers, total_users: row_headers.reduce((a, b) => a + b, 0) };
}

export function referenceRetention(data: SeedData, c: RetentionControls, scope: ChartScope = {}) {
  const w = new World(data, c.range, scope);
  const selected = w.selection(c.userFilters, c.shownIntents);
  const start = w.eventItem(c.startingEvent);
  const returnFilters = c.returnEvents?.length ? c.returnEvents : [c.startingEvent];
  const returnItems = returnFilters.map((f) => w.eventItem(f));
  const listed = listedOf(c.groupBy?.trait_values);
  const cohorts = new Map<string, Map<string, number>>();
  const returns = new Map<string, Set<number>>();
  for (const [person, traits] of w.persons) {
    if (selected?.has(person) === false) continue;
    const events = w.eventsOf(person);
    if (!countHolds(w.count(start, events), start.op, start.n)) continue;
    // `within` selected the person (countHolds above); the row is their first start in the range.
    const starts = events.filter((e) => w.inRange(e.t) && start.match(e));
    if (starts.length === 0) continue;
    const key = c.groupBy ? groupOfValue(present(traits, c.groupBy.trait_name), listed) : '';
    if (key === undefined) continue;
    const first = Math.min(...starts.map((e) => e.t));
    if (!cohorts.has(key)) cohorts.set(key, new Map());
    cohorts.get(key)!.set(person, w.binOf(first)!);
    const bins = new Set<number>();
    for (const r of returnItems) {
      if (!countHolds(w.count(r, events), r.op, r.n)) continue;
      for (const e of events) {
        if (w.inRange(e.t) && e.t >= r.window.lo && e.t < r.window.hi && r.match(e)) bins.add(w.binOf(e.t)!);
      }
    }
    returns.set(person, bins);
  }
  if (!c.groupBy) {
    return [
      { chart_name: c.startingEvent.event_name, ...retentionTable(w, cohorts.get('') ?? new Map(), returns) },
    ];
  }
  const weights = new Map([...cohorts.entries()].map(([k, m]) => [k, m.size]));
  const keys = shownKeys(weights, listed);
  return keys.map(
    (key): RetentionResult => ({
      chart_name: `${c.groupBy!.trait_name} = ${groupLabel(key, listed)}`,
      ...retentionTable(w, cohorts.get(key) ?? new Map(), returns),
    }),
  );
}
