import type { RetrieveDataResponse } from '../../shared/chart-responses.js';
import { retrieveDataResponseSchema } from '../../shared/chart-responses.js';
import type { Scalar } from '../../shared/primitives.js';
import { cohortsFor } from '../cohorts/store.js';
import { invalidInput, notFound } from '../errors.js';
import type { Queryable } from '../store/database.js';
import { type ChartContext, defaultDrilldowns, makeContext } from './context.js';
import { conversationAnalysisMembers } from './conversation-analysis.js';
import type { DrilldownStore } from './drilldown-store.js';
import { type Decoded, decodeToken } from './drilldown-token.js';
import { funnelMembers } from './funnel.js';
import { intentAnalysisMembers } from './intent-analysis.js';
import { intentDistributionMembers } from './intent-distribution.js';
import { retentionMembers } from './retention.js';
import { mergedCte } from './scan.js';
import { segmentationMembers } from './segmentation.js';
import { sentimentMembers } from './sentiment.js';
import { sessionMembers } from './session-chart.js';
import type { Query } from './sql.js';
import { compositionMembers } from './user-composition.js';
import { assertChartValid } from './validate.js';

/**
 * GET /bc/v1/db/retrieve_data (decisions §6): decodes a drilldown id, re-runs the chart's own facts
 * query for that one point and returns the users (or sessions, for the session chart) behind it,
 * at most `maxRows`, with the full count.
 */

export interface RetrieveLimits {
  maxRows: number;
  sessionIdsPerPoint: number;
}

export interface RetrieveExtras {
  /** Where version-2 ids find their query; the process's memory-only store when absent. */
  drilldowns?: DrilldownStore;
  /** Where the id's controls are validated (the service's quick connection); `db` when absent. */
  checks?: Queryable;
}

type UserRow = {
  user_id: string;
  id: string;
  traits: string;
  total: number;
};

type SessionRow = {
  session_id: string;
  user_id: string;
  id: string;
  started_at: Date;
  ended_at: Date | null;
  conversations: number;
  total: number;
};

/** Traits as stored; anything but a scalar (never written by identify) is left out rather than failing. */
function scalarsOf(json: string): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(JSON.parse(json) as Record<string, unknown>)) {
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))
      out[k] = v;
  }
  return out;
}

async function users(
  ctx: ChartContext,
  q: Query,
  members: string,
  max: number,
): Promise<RetrieveDataResponse> {
  const p = q.params;
  const cte = q.cte('members', members);
  const rows = await ctx.db.all<UserRow>(
    q.sql(`SELECT mb.person AS user_id, coalesce(u.primary_id, mb.person) AS id,
        coalesce(u.traits, '{}')::VARCHAR AS traits, count(*) OVER ()::DOUBLE AS total
      FROM (SELECT DISTINCT person FROM ${cte} WHERE person IS NOT NULL) mb
      LEFT JOIN users u ON u.project_id = ${p.bind(ctx.project)} AND u.user_id = mb.person
      ORDER BY mb.person LIMIT ${max}`),
    p.values,
  );
  const total = rows[0]?.total ?? 0;
  return {
    kind: 'users',
    total,
    truncated: rows.length < total,
    rows: rows.map((r) => ({ user_id: r.user_id, id: r.id, traits: scalarsOf(r.traits) })),
  };
}

async function sessions(
  ctx: ChartContext,
  q: Query,
  members: string,
  max: number,
): Promise<RetrieveDataResponse> {
  const p = q.params;
  const project = p.bind(ctx.project);
  const cte = q.cte('members', members);
  const merged = mergedCte(q, ctx);
  const rows = await ctx.db.all<SessionRow>(
    q.sql(`SELECT x.session_id, coalesce(m.canonical_user_id, x.user_id) AS user_id,
        coalesce(u.primary_id, m.canonical_user_id, x.user_id) AS id, x.started_at, x.ended_at,
        coalesce(cv.n, 0)::DOUBLE AS conversations, count(*) OVER ()::DOUBLE AS total
      FROM sessions x
      LEFT JOIN ${merged} m ON m.user_id = x.user_id
      LEFT JOIN users u ON u.project_id = ${project} AND u.user_id = coalesce(m.canonical_user_id, x.user_id)
      LEFT JOIN (SELECT session_id, count(*) AS n FROM conversations WHERE project_id = ${project}
                 AND session_id IN (SELECT session_id FROM ${cte}) GROUP BY session_id) cv ON cv.session_id = x.session_id
      WHERE x.project_id = ${project} AND x.session_id IN (SELECT session_id FROM ${cte})
      ORDER BY x.started_at, x.session_id LIMIT ${max}`),
    p.values,
  );
  const total = rows[0]?.total ?? 0;
  return {
    kind: 'sessions',
    total,
    truncated: rows.length < total,
    rows: rows.map((r) => ({
      session_id: r.session_id,
      user_id: r.user_id,
      id: r.id,
      started_at: r.started_at.toISOString(),
      ended_at: r.ended_at === null ? null : r.ended_at.toISOString(),
      conversations: r.conversations,
    })),
  };
}

/** The persons behind a point of any chart but the session chart (whose points are sessions). */
function personMembers(ctx: ChartContext, value: Decoded): { q: Query; members: string } | undefined {
  const { point } = value;
  switch (value.kind) {
    case 'segmentation':
      return point.chart === 'segmentation' ? segmentationMembers(ctx, value.controls, point) : undefined;
    case 'retention':
      return point.chart === 'retention' ? retentionMembers(ctx, value.controls, point) : undefined;
    case 'user-composition':
      return point.chart === 'user-composition' ? compositionMembers(ctx, value.controls, point) : undefined;
    case 'funnel':
      return point.chart === 'funnel' ? funnelMembers(ctx, value.controls, point) : undefined;
    case 'intent-distribution':
      return point.chart === 'intent-distribution'
        ? intentDistributionMembers(ctx, value.controls, point)
        : undefined;
    case 'sentiment-analysis':
      return point.chart === 'sentiment-analysis' ? sentimentMembers(ctx, value.controls, point) : undefined;
    case 'conversation-analysis':
      return point.chart === 'conversation-analysis'
        ? conversationAnalysisMembers(ctx, value.controls, point)
        : undefined;
    case 'intent-analysis':
      return point.chart === 'intent-analysis'
        ? intentAnalysisMembers(ctx, value.controls, point)
        : undefined;
    default:
      return undefined;
  }
}

export async function retrieveData(
  db: Queryable,
  project: string,
  id: string,
  limits: RetrieveLimits,
  extras: RetrieveExtras = {},
): Promise<RetrieveDataResponse> {
  const drilldowns = extras.drilldowns ?? defaultDrilldowns();
  const decoded = await decodeToken(id, project, drilldowns);
  if (!decoded.ok && 'unknown' in decoded) {
    throw notFound('unknown drilldown id: it belongs to another project or has expired; run the chart again');
  }
  if (!decoded.ok) throw invalidInput(decoded.issues);
  const { value } = decoded;
  await assertChartValid(extras.checks ?? db, value.controls);
  const ctx = makeContext(db, project, value.controls.range, value.scope, limits.sessionIdsPerPoint, {
    drilldowns,
    cohorts: await cohortsFor(db, project, value.controls),
  });
  const max = Math.max(0, Math.trunc(limits.maxRows));
  const outside = () => invalidInput([{ path: 'id', message: 'names a point the chart does not have' }]);
  let result: RetrieveDataResponse;
  if (value.kind === 'session' && value.point.chart === 'session') {
    const m = sessionMembers(ctx, value.controls, value.point);
    if (!m) throw outside();
    result = await sessions(ctx, m.q, m.members, max);
  } else {
    const m = personMembers(ctx, value);
    if (!m) throw outside();
    result = await users(ctx, m.q, m.members, max);
  }
  return retrieveDataResponseSchema.parse(result);
}
