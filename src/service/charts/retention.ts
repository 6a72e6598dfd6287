import type { RetentionControls } from '../../shared/chart-controls.js';
import type { EventFilter } from '../../shared/chart-filters.js';
import { type RetentionResponse, retentionResponseSchema } from '../../shared/chart-responses.js';
import { binKey, type ChartContext, intersect, span } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { eventMatcher, impliedByOneMatch, windowCondition } from './event-filter.js';
import { compileList } from './filter-list.js';
import { groupIs, grouping, inShownGroups, listedRowsOnly, topGroupsCte, traitGroupKey } from './groups.js';
import { type RetentionRow, retentionResults } from './retention-map.js';
import { binExpr, eventScan, personsCte, ScanValues } from './scan.js';
import { all, any, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * Retention (decisions §6): cohort i = persons whose first startingEvent in the range falls in bin i;
 * cell (i, j) = those of them with a return event in bin i+j (column 0 is the cohort itself).
 * SQL yields cohort sizes and (cohort bin, return bin) counts; retention-map.ts lays out the triangle.
 */

/** A filter's extra condition when its number_of rule says more than "at least one match". */
function countRule(q: Query, ctx: ChartContext, f: EventFilter): string[] {
  if (impliedByOneMatch({ op: f.number_of_operator, n: f.number_of })) return [];
  const list = compileList(q, ctx, 'person', (v) => [eventMatcher(q.params, ctx, f, v)]);
  // Joined to the person, not `IN` the list: a person with no match in the filter's window is not in
  // it, and reads as count 0, which rules such as `eq 0` or `lt 2` hold for.
  return [
    `(SELECT ${list.predicate('a')} FROM (SELECT s.person AS k) x LEFT JOIN ${list.cte} a ON a.key = x.k)`,
  ];
}

function returnFilters(c: RetentionControls): EventFilter[] {
  return c.returnEvents !== undefined && c.returnEvents.length > 0 ? c.returnEvents : [c.startingEvent];
}

/** CTEs `cohort` (person, cb, grp) and `rets` (person, rb): what both the chart and drilldowns read. */
function retentionFacts(q: Query, ctx: ChartContext, c: RetentionControls): { cohort: string; rets: string } {
  const p = q.params;
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  const startValues = new ScanValues(p);
  const start = eventMatcher(p, ctx, c.startingEvent, startValues);
  // The starting event's `within` selects persons (decisions §6: a user-selecting position, counted
  // within `within`, which may reach past the range); the cohort is still the bin of the person's
  // first starting event in the range. Scanned over `within` alone, a person's first one there set
  // the row (found by probing); scanned over the range alone, a match within `within` but outside
  // the range did not select the person (found by the property test on CI).
  const rule = { op: c.startingEvent.number_of_operator, n: c.startingEvent.number_of };
  // A rule one match implies (countRule adds nothing) and no match fails (`gte 1`, `gt 0`; `gte 0`
  // holds for everyone) asks for a match within `within`: implied by a start in the range, unless
  // `within` leaves part of the range out.
  const needsMatch = impliedByOneMatch(rule) && ((rule.op === 'gte' && rule.n >= 1) || rule.op === 'gt');
  const within = start.window;
  const selects = needsMatch && (within.lo > ctx.window.lo || within.hi < ctx.window.hi);
  const startScan = eventScan(
    q,
    ctx,
    selects ? span([within, ctx.window], ctx.window) : ctx.window,
    startValues,
  );
  const inRange = selects ? ` FILTER (WHERE ${windowCondition(p, ctx.window)})` : '';
  const selectedWithin = selects
    ? `HAVING count(*) FILTER (WHERE ${windowCondition(p, within)}) > 0 AND count(*)${inRange} > 0`
    : '';
  const starts = q.cte(
    'starts',
    `SELECT s.person, min(s.ts)${inRange} AS first FROM ${startScan} s
     WHERE ${all([start.condition, 's.person IS NOT NULL', ...selectedCondition(selected, 's.person'), ...countRule(q, ctx, c.startingEvent)])}
     GROUP BY s.person ${selectedWithin}`,
  );
  const g = c.groupBy;
  const grp = traitGroupKey(p, g);
  const traits = g ? `LEFT JOIN ${personsCte(q, ctx)} t ON t.person = st.person` : '';
  const cohort = q.cte(
    'cohort',
    `SELECT * FROM (SELECT st.person, ${binExpr(q, ctx, 'st.first')} AS cb, ${grp} AS grp FROM ${starts} st ${traits})
     ${listedRowsOnly(g?.trait_values)}`,
  );
  const retValues = new ScanValues(p);
  const filters = returnFilters(c);
  const returns = filters.map((f) => eventMatcher(p, ctx, f, retValues));
  const windows = returns.map((m) => intersect(m.window, ctx.window));
  const retScan = eventScan(q, ctx, span(windows, ctx.window), retValues);
  const hits = returns.map((m, i) =>
    all([m.condition, windowCondition(p, windows[i]!), ...countRule(q, ctx, filters[i]!)]),
  );
  const rets = q.cte(
    'rets',
    `SELECT DISTINCT s.person, ${binExpr(q, ctx, 's.ts')} AS rb FROM ${retScan} s
     WHERE s.person IN (SELECT person FROM ${cohort}) AND (${any(hits)})`,
  );
  return { cohort, rets };
}

export async function retentionChart(ctx: ChartContext, c: RetentionControls): Promise<RetentionResponse> {
  const q = new Query();
  const { cohort, rets } = retentionFacts(q, ctx, c);
  const observed = c.groupBy !== undefined && grouping(c.groupBy.trait_values).listed === undefined;
  const top = observed ? topGroupsCte(q, cohort, 'count(*)') : undefined;
  const keep = top ? `WHERE ${inShownGroups(top, 'c.grp')}` : '';
  const rows = await ctx.db.all<RetentionRow>(
    q.sql(`SELECT c.grp, c.cb::VARCHAR AS cb, r.rb::VARCHAR AS rb, count(*)::DOUBLE AS n
       FROM ${cohort} c JOIN ${rets} r ON r.person = c.person AND r.rb > c.cb ${keep} GROUP BY ALL
     UNION ALL
     SELECT c.grp, c.cb::VARCHAR, NULL, count(*)::DOUBLE FROM ${cohort} c ${keep} GROUP BY ALL`),
    q.params.values,
  );
  const encode = tokenEncoder(ctx, 'retention', c);
  return retentionResponseSchema.parse(retentionResults(ctx, c, rows, encode));
}

export function retentionMembers(
  ctx: ChartContext,
  c: RetentionControls,
  point: Extract<DrillPoint, { chart: 'retention' }>,
): { q: Query; members: string } | undefined {
  const cohortBin = ctx.bins[point.row];
  const cellBin = ctx.bins[point.row + point.col];
  if (!cohortBin || !cellBin) return undefined;
  const q = new Query();
  const p = q.params;
  const { cohort, rets } = retentionFacts(q, ctx, c);
  const conditions = [`c.cb = ${p.bind(binKey(cohortBin))}::DATE`];
  if (point.group !== undefined) conditions.push(groupIs(p, point.group, 'c.grp'));
  if (point.col > 0) {
    conditions.push(
      `c.person IN (SELECT r.person FROM ${rets} r WHERE r.rb = ${p.bind(binKey(cellBin))}::DATE)`,
    );
  }
  return { q, members: `SELECT c.person FROM ${cohort} c WHERE ${all(conditions)}` };
}
