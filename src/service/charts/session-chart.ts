import type { SessionControls } from '../../shared/chart-controls.js';
import {
  type SessionChartResponse,
  type SessionPoint,
  sessionChartResponseSchema,
} from '../../shared/chart-responses.js';
import { POINT_BYTES } from './budget.js';
import { binKey, type ChartContext } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { eventMatcher } from './event-filter.js';
import { compileList } from './filter-list.js';
import {
  addWeight,
  type GroupKey,
  groupBinKey,
  groupIs,
  grouping,
  inShownGroups,
  listedRowsOnly,
  shownGroups,
  topGroupsCte,
  traitGroupKey,
} from './groups.js';
import { binExpr, mergedCte, personOf, personsCte } from './scan.js';
import { all, Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * Session chart (decisions §6): a session belongs to the bin of its start (sessions.started_at, which
 * ingestion sets to the session's first event) when that start is in the range. Its length is
 * end_session time − start, or last event − start while open. eventFilters keep sessions whose own
 * events satisfy them (number_of counted per session, and/or/then per session); groupBy groups by
 * the session user's trait.
 */

export const CHART_NAME = 'Sessions';

/** CTE `ses`: session_id, started_at, fin, person, bin, grp for every session the chart counts. */
function sessionFacts(q: Query, ctx: ChartContext, c: SessionControls): string {
  const p = q.params;
  const project = p.bind(ctx.project);
  const person = personOf('x.user_id', 'm');
  const joins = [`LEFT JOIN ${mergedCte(q, ctx)} m ON m.user_id = x.user_id`];
  const where = [
    `x.project_id = ${project}`,
    `x.started_at >= ${p.instant(ctx.window.lo)}`,
    `x.started_at < ${p.instant(ctx.window.hi)}`,
    ...selectedCondition(userSelection(q, ctx, c.userFilters, c.shownIntents), person),
  ];
  if (ctx.scope.session_id !== undefined) where.push(`x.session_id = ${p.bind(ctx.scope.session_id)}`);
  if (ctx.scope.conversation_id !== undefined) {
    where.push(`x.session_id IN (SELECT session_id FROM conversations
      WHERE project_id = ${project} AND conversation_id = ${p.bind(ctx.scope.conversation_id)})`);
  }
  const filters = c.eventFilters ?? [];
  if (filters.length > 0) {
    const list = compileList(q, ctx, 'session_id', (v) => filters.map((f) => eventMatcher(p, ctx, f, v)));
    joins.push(`LEFT JOIN ${list.cte} a ON a.key = x.session_id`);
    where.push(list.predicate('a'));
  }
  const g = c.groupBy;
  if (g) joins.push(`LEFT JOIN ${personsCte(q, ctx)} t ON t.person = ${person}`);
  const grp = traitGroupKey(p, g);
  return q.cte(
    'ses',
    `SELECT * FROM (SELECT x.session_id, x.started_at, coalesce(x.ended_at, x.last_event_at) AS fin,
       ${person} AS person, ${binExpr(q, ctx, 'x.started_at')} AS bin, ${grp} AS grp
     FROM sessions x ${joins.join(' ')} WHERE ${all(where)}) ${listedRowsOnly(g?.trait_values)}`,
  );
}

type Row = {
  bin: string;
  grp: string | null;
  sessions: number;
  conversations: number;
  avg_len: number;
  ids: string[];
};

export async function sessionChart(ctx: ChartContext, c: SessionControls): Promise<SessionChartResponse> {
  const q = new Query();
  const ses = sessionFacts(q, ctx, c);
  const conv = q.cte(
    'conv',
    `SELECT session_id, count(*)::DOUBLE AS n FROM conversations
     WHERE project_id = ${q.params.bind(ctx.project)} AND session_id IN (SELECT session_id FROM ${ses}) GROUP BY session_id`,
  );
  const observed = c.groupBy !== undefined && grouping(c.groupBy.trait_values).listed === undefined;
  const top = observed ? topGroupsCte(q, ses, 'count(*)') : undefined;
  const cap = Math.max(0, Math.trunc(ctx.sessionIdsPerPoint));
  const rows = await ctx.db.all<Row>(
    q.sql(`SELECT s.bin::VARCHAR AS bin, s.grp, count(*)::DOUBLE AS sessions,
       coalesce(sum(cv.n), 0)::DOUBLE AS conversations,
       favg(epoch_ms(s.fin) - epoch_ms(s.started_at)) / 1000 AS avg_len,
       list(s.session_id ORDER BY s.started_at, s.session_id)[1:${cap}] AS ids
     FROM ${ses} s LEFT JOIN ${conv} cv ON cv.session_id = s.session_id
     ${top ? `WHERE ${inShownGroups(top, 's.grp')}` : ''} GROUP BY ALL`),
    q.params.values,
  );
  const byKey = new Map(rows.map((r) => [groupBinKey(c.groupBy ? r.grp : undefined, r.bin), r]));
  const encode = tokenEncoder(ctx, 'session', c);
  const pointsOf = (grp: GroupKey | undefined): SessionPoint[] =>
    ctx.bins.map((bin, b) => {
      const row = byKey.get(groupBinKey(grp, binKey(bin)));
      const drill: DrillPoint = { chart: 'session', bin: b };
      if (grp !== undefined) drill.group = grp;
      const id = encode(drill);
      const ids = row ? [...row.ids] : [];
      ctx.budget.point(POINT_BYTES + id.length + ids.reduce((n, s) => n + s.length + 3, 0));
      return {
        start: bin.startIso,
        end: bin.endIso,
        sessions: row?.sessions ?? 0,
        session_ids: ids,
        conversations: row?.conversations ?? 0,
        average_length: row?.avg_len ?? 0,
        drilldown_id: id,
      };
    });
  if (!c.groupBy)
    return sessionChartResponseSchema.parse({ chart_name: CHART_NAME, points: pointsOf(undefined) });
  const weights = new Map<GroupKey, number>();
  for (const r of rows) addWeight(weights, r.grp, r.sessions);
  const groups = shownGroups(grouping(c.groupBy.trait_values), weights).map((g) => ({
    group: g.label,
    points: pointsOf(g.key),
  }));
  return sessionChartResponseSchema.parse({ chart_name: CHART_NAME, groups });
}

export function sessionMembers(
  ctx: ChartContext,
  c: SessionControls,
  point: Extract<DrillPoint, { chart: 'session' }>,
): { q: Query; members: string } | undefined {
  const bin = ctx.bins[point.bin];
  if (!bin) return undefined;
  const q = new Query();
  const ses = sessionFacts(q, ctx, c);
  const conditions = [`bin = ${q.params.bind(binKey(bin))}::DATE`];
  if (point.group !== undefined) conditions.push(groupIs(q.params, point.group));
  return { q, members: `SELECT session_id FROM ${ses} WHERE ${all(conditions)}` };
}
