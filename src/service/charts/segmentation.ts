import type { SegmentationControls } from '../../shared/chart-controls.js';
import {
  type SegmentationResponse,
  type SegmentationResult,
  type SegPoint,
  segmentationResponseSchema,
} from '../../shared/chart-responses.js';
import { invalidInput } from '../errors.js';
import { POINT_BYTES } from './budget.js';
import { binKey, type ChartContext, intersect } from './context.js';
import { exactDigits } from './digits.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { eventMatcher, impliedByOneMatch } from './event-filter.js';
import { compileList } from './filter-list.js';
import {
  addWeight,
  type GroupKey,
  groupBinKey,
  groupIs,
  grouping,
  groupKeyExpr,
  inShownGroups,
  listedRowsOnly,
  shownGroups,
  topGroupsCte,
} from './groups.js';
import { aggregateSql, measureLabel, numericValue, valueMeasure } from './measure.js';
import { binExpr, eventScan, ScanValues } from './scan.js';
import { all, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * Segmentation (decisions §6): per eventFilter, per bin, `total` matching events, `unique` persons
 * among them, `average` = total/unique. An event counts when it is in the range and in its filter's
 * `within`; when number_of asks more than "at least one", only persons whose count in the window
 * satisfies it contribute. `combine_previous_operation` has no meaning here: each filter is its own
 * series, in order.
 */

/** CTE `facts` of series `i`: one row per counted event with columns bin (DATE), grp, person, val (the measured number). */
function seriesFacts(q: Query, ctx: ChartContext, c: SegmentationControls, i: number): string {
  const p = q.params;
  const f = c.eventFilters[i]!;
  const values = new ScanValues(p);
  const m = eventMatcher(p, ctx, f, values);
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  const conditions = [m.condition, ...selectedCondition(selected, 's.person')];
  if (!impliedByOneMatch(m)) {
    const list = compileList(q, ctx, 'person', (v) => [eventMatcher(p, ctx, f, v)]);
    conditions.push(`s.person IN (SELECT a.key FROM ${list.cte} a WHERE ${list.predicate('a')})`);
  }
  const g = f.groupBy;
  const grp = g ? groupKeyExpr(p, grouping(g.property_values), values.of(g.property_name)) : 'NULL::VARCHAR';
  const measure = valueMeasure(f.measure);
  const val = measure ? numericValue(values.of(measure.property_name)) : 'NULL::DOUBLE';
  const scan = eventScan(q, ctx, intersect(m.window, ctx.window), values);
  return q.cte(
    'facts',
    `SELECT ${binExpr(q, ctx, 's.ts')} AS bin, ${grp} AS grp, s.person, ${val} AS val FROM ${scan} s WHERE ${all(conditions)}`,
  );
}

type Row = {
  bin: string;
  grp: string | null;
  total: number;
  uniq: number;
  val: number | null;
};

async function seriesRows(ctx: ChartContext, c: SegmentationControls, i: number) {
  const q = new Query();
  const facts = seriesFacts(q, ctx, c, i);
  const g = c.eventFilters[i]!.groupBy;
  const observed = g !== undefined && grouping(g.property_values).listed === undefined;
  const measure = valueMeasure(c.eventFilters[i]!.measure);
  const val = measure ? `(${aggregateSql(measure)})::DOUBLE` : 'NULL::DOUBLE';
  const agg = q.cte(
    'agg',
    `SELECT bin, grp, count(*)::DOUBLE AS total, count(DISTINCT person)::DOUBLE AS uniq, ${val} AS val FROM ${facts} ${listedRowsOnly(g?.property_values)} GROUP BY bin, grp`,
  );
  const top = observed ? topGroupsCte(q, agg, 'sum(total)') : undefined;
  const where = top ? `WHERE ${inShownGroups(top)}` : '';
  return ctx.db.all<Row>(
    q.sql(`SELECT bin::VARCHAR AS bin, grp, total, uniq, val FROM ${agg} ${where}`),
    q.params.values,
  );
}

/**
 * `measured`: the series has a value measure (`path` and `label` name it in a refusal); `empty` is
 * its value for a bin without events.
 */
interface Measured {
  empty: number | null;
  path: string;
  label: string;
}

/**
 * A measure's value in a bin. Stored numbers reach ±1.8e308, so two of them sum past a double: that
 * was the service's own answer failing its schema, a 500 (found by probing). It is refused naming
 * the measure and the bin, as no number can answer it.
 */
function measureValue(bin: ChartContext['bins'][number], val: number | null | undefined, m: Measured) {
  if (val == null) return m.empty;
  if (!Number.isFinite(val)) {
    throw invalidInput([
      {
        path: m.path,
        message: `${m.label} in the bin starting ${bin.startIso} is beyond a double's range (±1.8e308)`,
      },
    ]);
  }
  return exactDigits(val);
}

function point(
  ctx: ChartContext,
  b: number,
  row: Row | undefined,
  token: string,
  measured?: Measured,
): SegPoint {
  const bin = ctx.bins[b]!;
  const total = row?.total ?? 0;
  const unique = row?.uniq ?? 0;
  ctx.budget.point(POINT_BYTES + token.length);
  return {
    start: bin.startIso,
    end: bin.endIso,
    total,
    unique,
    average: unique === 0 ? 0 : total / unique,
    ...(measured ? { value: measureValue(bin, row?.val, measured) } : {}),
    drilldown_id: token,
  };
}

export async function segmentationChart(
  ctx: ChartContext,
  c: SegmentationControls,
): Promise<SegmentationResponse> {
  const encode = tokenEncoder(ctx, 'segmentation', c);
  const results: SegmentationResult[] = [];
  for (const [i, f] of c.eventFilters.entries()) {
    const rows = await seriesRows(ctx, c, i);
    const byKey = new Map(rows.map((r) => [groupBinKey(f.groupBy ? r.grp : undefined, r.bin), r]));
    const measure = valueMeasure(f.measure);
    const measured = measure
      ? {
          empty: measure.aggregate === 'sum' ? 0 : null,
          path: `eventFilters[${i}].measure`,
          label: `the ${measure.aggregate} of "${measure.property_name}"`,
        }
      : undefined;
    const named = measure ? { measure: measureLabel(measure) } : {};
    const pointsOf = (grp: GroupKey | undefined) =>
      ctx.bins.map((bin, b) => {
        const drill: DrillPoint = { chart: 'segmentation', series: i, bin: b };
        if (grp !== undefined) drill.group = grp;
        return point(ctx, b, byKey.get(groupBinKey(grp, binKey(bin))), encode(drill), measured);
      });
    if (f.groupBy) {
      const weights = new Map<GroupKey, number>();
      for (const r of rows) addWeight(weights, r.grp, r.total);
      const groups = shownGroups(grouping(f.groupBy.property_values), weights);
      results.push({
        event_name: f.event_name,
        ...named,
        groups: groups.map((g) => ({ group: g.label, points: pointsOf(g.key) })),
      });
      continue;
    }
    const points = pointsOf(undefined);
    const n = points.length;
    results.push({
      event_name: f.event_name,
      ...named,
      points,
      highlights: {
        average_events: n === 0 ? 0 : points.reduce((s, p) => s + p.total, 0) / n,
        average_unique_users: n === 0 ? 0 : points.reduce((s, p) => s + p.unique, 0) / n,
      },
    });
  }
  return segmentationResponseSchema.parse(results);
}

/** SQL (with its query) selecting the persons behind one segmentation point. */
export function segmentationMembers(
  ctx: ChartContext,
  c: SegmentationControls,
  point: Extract<DrillPoint, { chart: 'segmentation' }>,
): { q: Query; members: string } | undefined {
  const bin = ctx.bins[point.bin];
  if (point.series >= c.eventFilters.length || !bin) return undefined;
  const q = new Query();
  const facts = seriesFacts(q, ctx, c, point.series);
  const p = q.params;
  const conditions = [`bin = ${p.bind(binKey(bin))}::DATE`, 'person IS NOT NULL'];
  if (point.group !== undefined) conditions.push(groupIs(p, point.group));
  return { q, members: `SELECT DISTINCT person FROM ${facts} WHERE ${all(conditions)}` };
}
