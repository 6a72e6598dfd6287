import type { ChartRange } from '../../shared/chart-filters.js';
import { binKey, makeContext, type Window } from '../charts/context.js';
import type { Queryable } from '../store/database.js';
import type { StoreValue } from '../store/statements.js';

/**
 * The facts behind the summary routes, per calendar bin of the range (decisions §6 bins) and in
 * total, over the project's events with their person resolved through merges. Each statement binds
 * its values ($1 project, $2/$3 window, $4 period, $5 zone, $6/$7 scope).
 */

export interface Scope {
  session_id?: string | undefined;
  conversation_id?: string | undefined;
}

export interface Frame {
  q: Queryable;
  project: string;
  range: ChartRange;
  scope: Scope;
}

const SCOPE =
  '($6::VARCHAR IS NULL OR e.session_id = $6) AND ($7::VARCHAR IS NULL OR e.conversation_id = $7)';

/** Project events in [$2, $3) and scope, with `person` and `bin` (local start date). */
const SCANNED = `SELECT e.*, coalesce(u.canonical_user_id, e.user_id) AS person,
    date_trunc($4, e.ts AT TIME ZONE $5)::DATE::VARCHAR AS bin
  FROM events e LEFT JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
  WHERE e.project_id = $1 AND e.ts >= $2::TIMESTAMPTZ AND e.ts < $3::TIMESTAMPTZ AND ${SCOPE}`;

function params(f: Frame, w: Window): StoreValue[] {
  return [
    f.project,
    w.lo.toISOString(),
    w.hi.toISOString(),
    f.range.period,
    f.range.tz,
    f.scope.session_id ?? null,
    f.scope.conversation_id ?? null,
  ];
}

/** Rows keyed by bin ('' for the whole window) from a statement selecting `bin` and numeric columns. */
async function byBin<K extends string>(
  f: Frame,
  w: Window,
  select: string,
): Promise<Map<string, Record<K, number>>> {
  const rows = await f.q.all<Record<string, unknown>>(`WITH scanned AS (${SCANNED}) ${select}`, params(f, w));
  const out = new Map<string, Record<K, number>>();
  for (const r of rows) {
    const values = Object.fromEntries(
      Object.entries(r)
        .filter(([k]) => k !== 'bin')
        .map(([k, v]) => [k, v === null ? 0 : Number(v)]),
    ) as Record<K, number>;
    out.set(typeof r.bin === 'string' ? r.bin : '', values);
  }
  return out;
}

export function frameBins(f: Frame) {
  const ctx = makeContext(f.q, f.project, f.range, {}, 0);
  const previous: Window = {
    lo: new Date(ctx.window.lo.getTime() - (ctx.window.hi.getTime() - ctx.window.lo.getTime())),
    hi: ctx.window.lo,
  };
  return { bins: ctx.bins.map((b) => ({ bin: b, key: binKey(b) })), window: ctx.window, previous };
}

/** GROUPING SETS gives per-bin rows and one total row (bin NULL) from one scan. */
const PER_BIN_AND_TOTAL = 'GROUP BY GROUPING SETS ((bin), ())';

export type ConversationFacts = 'users' | 'new_users' | 'conversations' | 'duration' | 'prompts' | 'intents';

export function conversationFacts(f: Frame, w: Window) {
  return byBin<ConversationFacts>(
    f,
    w,
    `, summaries AS (SELECT person, bin, ts, properties FROM scanned WHERE event = 'Conversation Summary'),
       firsts AS (SELECT person, min(ts) AS first FROM summaries GROUP BY person)
     SELECT s.bin, count(DISTINCT s.person) AS users,
            count(DISTINCT s.person) FILTER (WHERE s.ts = fi.first) AS new_users,
            count(*) AS conversations,
            favg(TRY_CAST(json_extract(s.properties, '/duration_s') AS DOUBLE)) * 1000 AS duration,
            favg(TRY_CAST(json_extract(s.properties, '/turns') AS DOUBLE)) AS prompts,
            avg(coalesce(json_array_length(json_extract(s.properties, '/intents')), 0)) AS intents
       FROM summaries s JOIN firsts fi USING (person) ${PER_BIN_AND_TOTAL}`,
  );
}

export type EngagementFacts = 'users' | 'new_users' | 'conversations' | 'intents';

export function engagementFacts(f: Frame, w: Window) {
  // New users: persons created in the window (merged anonymous users count as their user), among
  // those the scope shows when a session or conversation scope is given.
  return byBin<EngagementFacts>(
    f,
    w,
    `, created AS (
        SELECT n.user_id AS person, date_trunc($4, n.created_at AT TIME ZONE $5)::DATE::VARCHAR AS bin
          FROM users n WHERE n.project_id = $1 AND n.user_id = n.canonical_user_id
           AND n.created_at >= $2::TIMESTAMPTZ AND n.created_at < $3::TIMESTAMPTZ
           AND (($6::VARCHAR IS NULL AND $7::VARCHAR IS NULL) OR n.user_id IN (SELECT person FROM scanned))),
       facts AS (
        SELECT bin, person, event, NULL AS new_person FROM scanned
        UNION ALL SELECT bin, NULL, NULL, person FROM created)
     SELECT bin, count(DISTINCT person) AS users, count(DISTINCT new_person) AS new_users,
            count(*) FILTER (WHERE event = 'Conversation Started') AS conversations,
            count(*) FILTER (WHERE event = 'Intent Informed') AS intents
       FROM facts ${PER_BIN_AND_TOTAL}`,
  );
}

export async function sentimentCounts(f: Frame, w: Window): Promise<Map<string, number>> {
  const rows = await f.q.all<{ label: string; n: bigint }>(
    `WITH scanned AS (${SCANNED})
     SELECT json_extract_string(properties, '/sentiment') AS label, count(*) AS n
       FROM scanned WHERE event = 'Conversation Summary' GROUP BY ALL`,
    params(f, w),
  );
  return new Map(rows.map((r) => [r.label, Number(r.n)]));
}

export async function intentCounts(f: Frame, w: Window): Promise<Array<{ intent: string; count: number }>> {
  const rows = await f.q.all<{ intent: string; n: bigint }>(
    `WITH scanned AS (${SCANNED})
     SELECT json_extract_string(properties, '/intent') AS intent, count(*) AS n
       FROM scanned WHERE event = 'Intent Informed' AND json_extract_string(properties, '/intent') IS NOT NULL
      GROUP BY ALL ORDER BY n DESC, intent`,
    params(f, w),
  );
  return rows.map((r) => ({ intent: r.intent, count: Number(r.n) }));
}

/** Percent change from `before` to `now`; 0 when there was nothing before. */
export function deltaPercent(now: number, before: number): number {
  return before === 0 ? 0 : ((now - before) / before) * 100;
}
