import type { ConversationAnalyse } from '../../shared/analysis-controls.js';
import {
  type AnalysisPoint,
  type AnalysisResponse,
  analysisResponseSchema,
} from '../../shared/analysis-responses.js';
import type { ConversationAnalysisControls } from '../../shared/chart-controls.js';
import { conversationFacts, firstSeenCte, intentFacts, type SummaryField } from './analysis-facts.js';
import { type AggRow, type Aggregates, binnedAndWhole, buildAnalysis, ratio } from './analysis-points.js';
import { binKey, type ChartContext } from './context.js';
import { type DrillPoint, tokenEncoder } from './drilldown-token.js';
import { type GroupKey, groupIs } from './groups.js';
import { binExpr } from './scan.js';
import { all, Query } from './sql.js';

/**
 * Conversation analysis (analysis-controls.ts CONVERSATION_ANALYSIS_DESCRIPTION): per bin, numbers
 * over the conversations whose summary falls in it, or (newIntents) over the intents shown in it.
 */

type Shape = {
  point: (a: Aggregates) => Partial<AnalysisPoint>;
  highlights: (a: Aggregates) => Record<string, number>;
};

const v = (a: Aggregates, k: string) => a[k] ?? 0;

const SHAPES: Record<ConversationAnalyse, Shape> = {
  intentConversion: {
    point: (a) => ({ conversion: 100 * ratio(a.with_intents, a.n), count: v(a, 'n') }),
    highlights: (a) => ({ conversion: 100 * ratio(a.with_intents, a.n), count: v(a, 'n') }),
  },
  firstIntentFriction: {
    point: (a) => ({ average_friction_percent: 100 * ratio(a.friction, a.with_intents) }),
    highlights: (a) => ({
      average_friction_percent: 100 * ratio(a.friction, a.with_intents),
      total_conversations: v(a, 'with_intents'),
      total_first_intents_fulfilled: v(a, 'with_intents') - v(a, 'friction'),
    }),
  },
  newIntents: {
    point: (a) => ({
      unique_users: v(a, 'users'),
      new_intents: v(a, 'fresh'),
      average: ratio(a.fresh, a.users),
    }),
    highlights: (a) => ({
      unique_users: v(a, 'users'),
      new_intents: v(a, 'fresh'),
      average: ratio(a.fresh, a.users),
    }),
  },
  sentiment: {
    point: (a) => ({ count: v(a, 'n') }),
    highlights: (a) => ({
      count: v(a, 'n'),
      positive: v(a, 'positive'),
      negative: v(a, 'negative'),
      neutral: v(a, 'neutral'),
    }),
  },
  duration: {
    point: (a) => ({ average_sec: ratio(a.duration, a.n), total_sec: v(a, 'duration') }),
    highlights: (a) => ({ average_sec: ratio(a.duration, a.n), total_sec: v(a, 'duration') }),
  },
  prompts: {
    point: (a) => ({ total: v(a, 'turns'), average_sec: ratio(a.duration, a.turns) }),
    highlights: (a) => ({ total: v(a, 'turns'), average_sec: ratio(a.duration, a.turns) }),
  },
};

/** Each aggregate of the conversation analyses: its SQL and the summary fields it reads. */
const AGGREGATES: Record<string, { sql: string; fields: SummaryField[] }> = {
  n: { sql: 'count(*)', fields: [] },
  with_intents: { sql: 'count(*) FILTER (WHERE n_intents > 0)', fields: ['n_intents'] },
  friction: {
    sql: "count(*) FILTER (WHERE n_intents > 0 AND (function_errors > 0 OR sentiment = 'negative'))",
    fields: ['n_intents', 'function_errors', 'sentiment'],
  },
  positive: { sql: "count(*) FILTER (WHERE sentiment = 'positive')", fields: ['sentiment'] },
  negative: { sql: "count(*) FILTER (WHERE sentiment = 'negative')", fields: ['sentiment'] },
  neutral: { sql: "count(*) FILTER (WHERE sentiment = 'neutral')", fields: ['sentiment'] },
  duration: { sql: 'coalesce(fsum(duration_s), 0)', fields: ['duration_s'] },
  turns: { sql: 'coalesce(sum(turns), 0)', fields: ['turns'] },
};

/** What each analyse reads (newIntents has a query of its own): only those are computed. */
const NEEDS: Record<Exclude<ConversationAnalyse, 'newIntents'>, string[]> = {
  intentConversion: ['n', 'with_intents'],
  firstIntentFriction: ['with_intents', 'friction'],
  sentiment: ['n', 'positive', 'negative', 'neutral'],
  duration: ['n', 'duration'],
  prompts: ['turns', 'duration'],
};

function conversationSql(
  q: Query,
  ctx: ChartContext,
  c: ConversationAnalysisControls & { analyse: Exclude<ConversationAnalyse, 'newIntents'> },
): string {
  // `n` also ranks the groups (buildAnalysis): without it they came alphabetically (found by probing).
  const names = c.groupBy ? [...new Set(['n', ...NEEDS[c.analyse]])] : NEEDS[c.analyse];
  const needs = names.map((name) => ({ name, ...AGGREGATES[name]! }));
  const fields = [...new Set(needs.flatMap((a) => a.fields))];
  // The aggregates read no person: only user filters and groupBy need persons resolved.
  const convs = conversationFacts(q, ctx, c, fields, { persons: false });
  return q.sql(binnedAndWhole(convs, needs.map((a) => `(${a.sql})::DOUBLE AS ${a.name}`).join(', ')));
}

function newIntentsSql(q: Query, ctx: ChartContext, c: ConversationAnalysisControls): string {
  const p = q.params;
  const intents = intentFacts(q, ctx, c);
  const first = firstSeenCte(q, ctx);
  const fresh = `f.first >= ${p.instant(ctx.window.lo)} AND f.first < ${p.instant(ctx.window.hi)} AND ${binExpr(q, ctx, 'f.first')} = i.bin`;
  const joined = q.cte(
    'joined',
    `SELECT i.*, coalesce(${fresh}, FALSE) AS is_new FROM ${intents} i LEFT JOIN ${first} f ON f.intent = i.intent`,
  );
  return q.sql(
    binnedAndWhole(
      joined,
      `count(DISTINCT person)::DOUBLE AS users,
      count(DISTINCT intent) FILTER (WHERE is_new)::DOUBLE AS fresh, count(*)::DOUBLE AS n`,
    ),
  );
}

export async function conversationAnalysisChart(
  ctx: ChartContext,
  c: ConversationAnalysisControls,
): Promise<AnalysisResponse> {
  const q = new Query();
  const sql =
    c.analyse === 'newIntents'
      ? newIntentsSql(q, ctx, c)
      : conversationSql(q, ctx, { ...c, analyse: c.analyse });
  const rows = await ctx.db.all<AggRow>(sql, q.params.values);
  const encode = tokenEncoder(ctx, 'conversation-analysis', c);
  const drill = (bin: number, grp: GroupKey | undefined) => {
    const point: DrillPoint = { chart: 'conversation-analysis', bin };
    if (grp !== undefined) point.group = grp;
    return encode(point);
  };
  const shape = SHAPES[c.analyse];
  return analysisResponseSchema.parse(
    buildAnalysis(ctx, c.analyse, rows, c.groupBy, shape.point, shape.highlights, drill),
  );
}

export function conversationAnalysisMembers(
  ctx: ChartContext,
  c: ConversationAnalysisControls,
  point: Extract<DrillPoint, { chart: 'conversation-analysis' }>,
): { q: Query; members: string } | undefined {
  const bin = ctx.bins[point.bin];
  if (!bin) return undefined;
  const q = new Query();
  const facts = c.analyse === 'newIntents' ? intentFacts(q, ctx, c) : conversationFacts(q, ctx, c);
  const conditions = [`bin = ${q.params.bind(binKey(bin))}::DATE`];
  if (point.group !== undefined) conditions.push(groupIs(q.params, point.group));
  return { q, members: `SELECT person FROM ${facts} WHERE ${all(conditions)}` };
}
