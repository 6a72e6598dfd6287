import type { Database } from '../src/service/store/database.js';

/**
 * Bench rows for the charts of issue 18 (funnel, intent distribution, sentiment, conversation and
 * intent analyses), each against its own yardstick: one hand-written SQL query that computes the
 * same answer on the same DuckDB file. charts.ts prints them with a ≤ 2x target; `answer` turns
 * the yardstick's rows and the chart's response into one comparable string, so a yardstick that
 * drifts from the chart's semantics shows as a mismatch instead of a flattering ratio.
 */

export const ANALYSIS_TARGET = 2;

/** Conversation Summary rows, one per generated session's conversation /0: what the analyses read. */
export async function generateSummaries(
  db: Database,
  project: string,
  sessions: number,
  start: (s: string) => string,
  owner: (s: string) => string,
) {
  await db.writer.run(`INSERT INTO events SELECT '${project}', 'sum' || s, 'Conversation Summary', 'track',
    ${start('s')} + INTERVAL 280 SECOND, ${owner('s')}, 's' || s, 's' || s || '/0',
    json_object('turns', 1 + s % 5, 'duration_s', 30 + s % 240, 'function_errors', CASE WHEN s % 9 = 0 THEN 1 ELSE 0 END,
      'sentiment', ['positive', 'neutral', 'negative', 'neutral'][1 + (hash(s) % 4)::BIGINT],
      'intents', CASE WHEN s % 3 = 0 THEN [] ELSE ['billing'] END),
    NULL, ${start('s')}, NULL FROM range(${sessions}) t(s)`);
}

export interface AnalysisCase {
  name: string;
  kind: 'funnel' | 'intent-distribution' | 'sentiment-analysis' | 'conversation-analysis' | 'intent-analysis';
  controls: (range: unknown) => unknown;
  /** $1 project, $2 range start, $3 range end, $4 zone. */
  yardstick: string;
  /** Both answers as one canonical string. */
  answer: (rows: Array<Record<string, unknown>> | unknown) => string;
}

const PERSON = `coalesce(u.canonical_user_id, e.user_id)`;
const IN_RANGE = `e.project_id = $1 AND e.ts >= $2::TIMESTAMPTZ AND e.ts < $3::TIMESTAMPTZ`;
const JOIN_USERS = `LEFT JOIN users u ON u.project_id = $1 AND u.user_id = e.user_id`;
const round = (n: unknown) => Math.round(Number(n) * 1000) / 1000;

type Row = Record<string, unknown>;
const rowsOf = (x: unknown) => x as Row[];

/** A distribution as `label=n` pairs: the yardstick's rows (label, n) or the chart's slices (empty ones left out with `dropEmpty`). */
function slicesAnswer(x: unknown, dropEmpty: boolean): string {
  const pairs = Array.isArray(x)
    ? rowsOf(x).map((r) => `${r.label}=${r.n}`)
    : ((x as { slices?: Array<{ label: string; value: number }> }).slices ?? [])
        .filter((s) => !dropEmpty || s.value > 0)
        .map((s) => `${s.label}=${s.value}`);
  return pairs.sort().join();
}

export const ANALYSIS_CASES: AnalysisCase[] = [
  {
    name: 'funnel (3 steps)',
    kind: 'funnel',
    controls: (range) => ({
      range,
      eventFilters: [
        { event_name: 'Conversation Started' },
        { event_name: 'Conversation Turn' },
        { event_name: 'Intent Informed' },
      ],
    }),
    yardstick: `WITH e AS (SELECT ${PERSON} AS p, e.event, e.ts FROM events e ${JOIN_USERS} WHERE ${IN_RANGE}
        AND e.event IN ('Conversation Started', 'Conversation Turn', 'Intent Informed')),
      a AS (SELECT p, min(ts) AS t FROM e WHERE event = 'Conversation Started' GROUP BY p),
      b AS (SELECT a.p, min(e.ts) AS t FROM a JOIN e ON e.p = a.p AND e.event = 'Conversation Turn' AND e.ts > a.t GROUP BY a.p),
      c AS (SELECT b.p FROM b JOIN e ON e.p = b.p AND e.event = 'Intent Informed' AND e.ts > b.t GROUP BY b.p)
      SELECT (SELECT count(*) FROM a)::DOUBLE AS a, (SELECT count(*) FROM b)::DOUBLE AS b, (SELECT count(*) FROM c)::DOUBLE AS c`,
    answer: (x) =>
      Array.isArray(x)
        ? rowsOf(x)
            .map((r) => [r.a, r.b, r.c].join(','))
            .join()
        : ((x as { events: Array<{ count: number }> }).events ?? []).map((s) => s.count).join(','),
  },
  {
    name: 'intent distribution',
    kind: 'intent-distribution',
    controls: (range) => ({ range }),
    yardstick: `SELECT json_extract_string(e.properties, '/intent') AS label, count(DISTINCT [e.session_id, e.conversation_id])::DOUBLE AS n
      FROM events e WHERE ${IN_RANGE} AND e.event = 'Intent Informed' AND e.conversation_id IS NOT NULL GROUP BY 1`,
    answer: (x) => slicesAnswer(x, false),
  },
  {
    name: 'sentiment (Any Intent)',
    kind: 'sentiment-analysis',
    controls: (range) => ({ range, intentFilter: { intent: 'Any Intent' } }),
    yardstick: `SELECT json_extract_string(e.properties, '/sentiment') AS label, count(*)::DOUBLE AS n FROM events e
      WHERE ${IN_RANGE} AND e.event = 'Conversation Summary' AND e.conversation_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM events i WHERE i.project_id = $1 AND i.event = 'Intent Informed' AND i.ts >= $2::TIMESTAMPTZ
          AND i.ts < $3::TIMESTAMPTZ AND i.session_id = e.session_id AND i.conversation_id = e.conversation_id)
      GROUP BY 1`,
    answer: (x) => slicesAnswer(x, true),
  },
  {
    name: 'conversations (duration)',
    kind: 'conversation-analysis',
    controls: (range) => ({ range, analyse: 'duration' }),
    yardstick: `SELECT sum(TRY_CAST(json_extract_string(e.properties, '/duration_s') AS DOUBLE)) AS total
      FROM events e WHERE ${IN_RANGE} AND e.event = 'Conversation Summary' AND e.conversation_id IS NOT NULL
      GROUP BY date_trunc('day', e.ts AT TIME ZONE $4) ORDER BY date_trunc('day', e.ts AT TIME ZONE $4)`,
    answer: (x) =>
      Array.isArray(x)
        ? rowsOf(x)
            .map((r) => round(r.total))
            .join()
        : ((x as { points: Array<{ total_sec?: number }> }).points ?? [])
            .filter((p) => (p.total_sec ?? 0) > 0)
            .map((p) => round(p.total_sec))
            .join(),
  },
  {
    name: 'intent analysis (fulfillment)',
    kind: 'intent-analysis',
    controls: (range) => ({ range, analyse: 'intentFulfillmentRate' }),
    yardstick: `SELECT count(*)::DOUBLE AS n FROM events e JOIN events s ON s.project_id = $1 AND s.event = 'Conversation Summary'
        AND s.ts >= $2::TIMESTAMPTZ AND s.ts < $3::TIMESTAMPTZ AND s.session_id = e.session_id AND s.conversation_id = e.conversation_id
      WHERE ${IN_RANGE} AND e.event = 'Intent Informed'
      GROUP BY date_trunc('day', e.ts AT TIME ZONE $4) ORDER BY date_trunc('day', e.ts AT TIME ZONE $4)`,
    answer: (x) =>
      Array.isArray(x)
        ? rowsOf(x)
            .map((r) => r.n)
            .join()
        : ((x as { points: Array<{ count?: number }> }).points ?? [])
            .filter((p) => (p.count ?? 0) > 0)
            .map((p) => p.count)
            .join(),
  },
];
