import { type ConversionWindow, windowMs } from '../../shared/analysis-controls.js';
import {
  type FunnelResponse,
  type FunnelStep,
  funnelResponseSchema,
} from '../../shared/analysis-responses.js';
import type { FunnelControls } from '../../shared/chart-controls.js';
import { ANY_EVENT } from '../../shared/chart-filters.js';
import { EVENT_NAMES } from '../../shared/event-names.js';
import { POINT_BYTES } from './budget.js';
import { type ChartContext, intersect, span } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { eventMatcher, windowCondition } from './event-filter.js';
import {
  addWeight,
  type GroupKey,
  groupIs,
  grouping,
  inShownGroups,
  listedRowsOnly,
  shownGroups,
  topGroupsCte,
  traitGroupKey,
} from './groups.js';
import { eventScan, personsCte, ScanValues } from './scan.js';
import { all, any, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * Funnel (first-touch, like Mixpanel; analysis-controls.ts FUNNEL_DESCRIPTION): a person enters at
 * their first step-1 event in the range; each later step is the first matching event strictly after
 * the previous step's (in time, then event order at one instant), within the conversion window of the entry. Persons who reach step k also
 * reached every step before it, so one `reached` index per person says it all.
 */

export const CHART_NAME = 'Funnel';

/** SQL for "t is within the window after the entry t0": the range end alone bounds it when absent. */
function windowed(q: Query, w: ConversionWindow | undefined, t: string, t0: string): string[] {
  return w ? [`epoch_ms(${t}) < epoch_ms(${t0}) + ${q.params.number(windowMs(w))}`] : [];
}

/**
 * Events at one instant are in shared/event-order.ts's order (a conversation's start before its
 * turns, its end after them), then by event_id: "after" is strict in (time, rank, id), so one event
 * never serves two steps and a generated start at its first turn's instant still comes first.
 */
const RANKS: ReadonlyArray<[number, string[]]> = [
  [0, [EVENT_NAMES.sessionStarted, EVENT_NAMES.conversationStarted]],
  [1, [EVENT_NAMES.userIdentified, EVENT_NAMES.userAliased]],
  [3, [EVENT_NAMES.conversationEnded]],
  [4, [EVENT_NAMES.sessionEnded]],
];
const OTHER_RANK = 2;

function rankOf(event: string): number {
  return RANKS.find(([, names]) => names.includes(event))?.[0] ?? OTHER_RANK;
}

function rankSql(q: Query, event: string): string {
  const p = q.params;
  const whens = RANKS.map(
    ([rank, names]) => `WHEN ${event} IN (${names.map((n) => p.bind(n)).join(', ')}) THEN ${rank}`,
  );
  return `CASE ${whens.join(' ')} ELSE ${OTHER_RANK} END`;
}

/**
 * The order key of a hit row: DuckDB's sort key of (ts, rank, event_id), a blob whose byte order is
 * that order. Built once per row, it makes each step's min and "after" plain blob comparisons, where a
 * struct {t, r, id} was encoded again at every min and compare (1M events, 3 steps: the funnel's SQL
 * 0.9x). When every step names its event, a hit's rank is its step's, read from the flags instead
 * of the name.
 */
function orderKey(q: Query, c: FunnelControls): string {
  const names = c.eventFilters.map((f) => f.event_name);
  const ranks = names.map(rankOf);
  let rank: string;
  if (names.includes(ANY_EVENT)) rank = rankSql(q, 's.event');
  else if (ranks.every((r) => r === ranks[0])) rank = String(ranks[0]);
  else rank = `CASE ${ranks.map((r, i) => `WHEN h${i} THEN ${r}`).join(' ')} END`;
  const asc = "'ASC NULLS LAST'";
  return `create_sort_key(s.ts, ${asc}, ${rank}, ${asc}, s.event_id, ${asc})`;
}

/** CTE `reach`: person, grp, reached (0-based index of the last step the person reached). */
function funnelFacts(q: Query, ctx: ChartContext, c: FunnelControls): string {
  const p = q.params;
  const values = new ScanValues(p);
  const steps = c.eventFilters.map((f) => eventMatcher(p, ctx, f, values));
  const windows = steps.map((m) => intersect(m.window, ctx.window));
  const scanned = span(windows, ctx.window);
  const scan = eventScan(q, ctx, scanned, values);
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  // A step's window is spelt out only where it is narrower than the scan's (a `within`), and its
  // condition is wrapped in coalesce only when it can be NULL (property filters): plain event names
  // let DuckDB push them down into the scan as one IN list.
  const conditions = steps.map((m, i) => {
    const w = windows[i]!;
    const narrower = w.lo > scanned.lo || w.hi < scanned.hi;
    return all([m.condition, ...(narrower ? [windowCondition(p, w)] : [])]);
  });
  const flags = conditions.map((cond, i) =>
    (c.eventFilters[i]!.with ?? []).length === 0 ? `${cond} AS h${i}` : `coalesce(${cond}, FALSE) AS h${i}`,
  );
  // The person of an event without a user is NULL, and of one with a user never is (scan.ts).
  const hits = q.cte(
    'hits',
    `SELECT person, ts, ${orderKey(q, c)} AS o, ${steps.map((_, i) => `h${i}`).join(', ')}
     FROM (SELECT s.person, s.ts, s.event, s.event_id, ${flags.join(', ')} FROM ${scan} s
       WHERE ${all(['s.user_id IS NOT NULL', ...selectedCondition(selected, 's.person'), any(conditions)])}) s`,
  );
  // The last step needs no order key, only a match.
  let previous = q.cte(
    'step_0',
    steps.length === 1
      ? `SELECT DISTINCT person FROM ${hits} WHERE h0`
      : `SELECT person, min(ts) AS t0, min(o) AS o FROM ${hits} WHERE h0 GROUP BY person`,
  );
  const reached = [`SELECT person, 0 AS k FROM ${previous}`];
  for (let k = 1; k < steps.length; k++) {
    const on = [
      `h.person = a.person`,
      `h.h${k}`,
      'h.o > a.o',
      ...windowed(q, c.conversionWindow, 'h.ts', 'a.t0'),
    ];
    previous = q.cte(
      `step_${k}`,
      k === steps.length - 1
        ? `SELECT DISTINCT a.person FROM ${previous} a JOIN ${hits} h ON ${all(on)}`
        : `SELECT a.person, a.t0, min(h.o) AS o FROM ${previous} a JOIN ${hits} h ON ${all(on)} GROUP BY a.person, a.t0`,
    );
    reached.push(`SELECT person, ${k} AS k FROM ${previous}`);
  }
  const g = c.groupBy;
  const grp = traitGroupKey(p, g);
  const persons = q.cte(
    'reached',
    `SELECT person, max(k) AS reached FROM (${reached.join(' UNION ALL ')}) GROUP BY person`,
  );
  return q.cte(
    'reach',
    `SELECT * FROM (SELECT r.person, r.reached, ${grp} AS grp FROM ${persons} r
       ${g ? `LEFT JOIN ${personsCte(q, ctx)} t ON t.person = r.person` : ''}) ${listedRowsOnly(g?.trait_values)}`,
  );
}

type Row = { grp: string | null; reached: number; n: number };

export async function funnelChart(ctx: ChartContext, c: FunnelControls): Promise<FunnelResponse> {
  const q = new Query();
  const reach = funnelFacts(q, ctx, c);
  const observed = c.groupBy !== undefined && grouping(c.groupBy.trait_values).listed === undefined;
  const top = observed ? topGroupsCte(q, reach, 'count(*)') : undefined;
  const rows = await ctx.db.all<Row>(
    q.sql(`SELECT grp, reached::DOUBLE AS reached, count(*)::DOUBLE AS n FROM ${reach}
      ${top ? `WHERE ${inShownGroups(top)}` : ''} GROUP BY ALL`),
    q.params.values,
  );
  const encode = tokenEncoder(ctx, 'funnel', c);
  const stepsOf = (grp: GroupKey | undefined): FunnelStep[] => {
    const mine = rows.filter((r) => (grp === undefined ? true : r.grp === grp));
    const counts = c.eventFilters.map((_, k) =>
      mine.filter((r) => r.reached >= k).reduce((n, r) => n + r.n, 0),
    );
    const entered = counts[0] ?? 0;
    return c.eventFilters.map((f, k) => {
      const drill: DrillPoint = { chart: 'funnel', step: k };
      if (grp !== undefined) drill.group = grp;
      const id = encode(drill);
      ctx.budget.point(POINT_BYTES + id.length + f.event_name.length);
      const count = counts[k] ?? 0;
      return {
        event: f.event_name,
        count,
        percent: entered === 0 ? 0 : (100 * count) / entered,
        drilldown_id: id,
      };
    });
  };
  if (!c.groupBy) {
    const events = stepsOf(undefined);
    const first = events[0]?.count ?? 0;
    const last = events.at(-1)?.count ?? 0;
    return funnelResponseSchema.parse({
      chart_name: CHART_NAME,
      events,
      highlights: { number_of_users: first, conversion_rate: first === 0 ? 0 : (100 * last) / first },
    });
  }
  const weights = new Map<GroupKey, number>();
  for (const r of rows) addWeight(weights, r.grp, r.n);
  const groups = shownGroups(grouping(c.groupBy.trait_values), weights).map((g) => ({
    group: g.label,
    events: stepsOf(g.key),
  }));
  return funnelResponseSchema.parse({ chart_name: CHART_NAME, groups });
}

export function funnelMembers(
  ctx: ChartContext,
  c: FunnelControls,
  point: Extract<DrillPoint, { chart: 'funnel' }>,
): { q: Query; members: string } | undefined {
  if (point.step >= c.eventFilters.length) return undefined;
  const q = new Query();
  const reach = funnelFacts(q, ctx, c);
  const conditions = [`reached >= ${q.params.number(point.step)}`];
  if (point.group !== undefined) conditions.push(groupIs(q.params, point.group));
  return { q, members: `SELECT person FROM ${reach} WHERE ${all(conditions)}` };
}
