import { z } from 'zod';
import {
  engagementSchema,
  newIntentsSchema,
  type SummaryQuery,
  summaryQuerySchema,
  topIntentsSchema,
  userConversationsSchema,
  userSentimentSchema,
} from '../../shared/summaries.js';
import { assertChartValid } from '../charts/validate.js';
import { route } from '../http/route.js';
import type { Scope as Tenant } from '../identity/identity.js';
import { leaseRead } from '../read/lease.js';
import type { Database, Queryable } from '../store/database.js';
import {
  conversationFacts,
  deltaPercent,
  engagementFacts,
  type Frame,
  frameBins,
  intentCounts,
  sentimentCounts,
} from './queries.js';

const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;
const percent = (part: number, whole: number) => (whole === 0 ? 0 : (100 * part) / whole);

async function withFrame<T>(
  db: Database,
  { tenant, query, signal }: { tenant: Tenant; query: SummaryQuery; signal: AbortSignal },
  fn: (f: Frame) => Promise<T>,
) {
  // Zone names DuckDB does not know are a 400 naming range.tz, as for charts.
  await assertChartValid(db.read, { range: query.range });
  const scope = { session_id: query.session_id, conversation_id: query.conversation_id };
  return leaseRead(
    db,
    tenant,
    (q: Queryable) => fn({ q, project: tenant.projectId, range: query.range, scope }),
    signal,
  );
}

const RANGE =
  'range is a chart range (JSON, or bracket form range[start]=…), binned as charts are (decisions §6).';
const DELTA =
  'delta_percent compares the range with the equally long range just before it (0 when that had none).';

export function summaryRoutes(db: Database) {
  const common = {
    tag: 'Summary',
    query: summaryQuerySchema,
    bracketQuery: true as const,
    rate: 'chart' as const,
  };
  return [
    route({
      ...common,
      method: 'GET',
      url: '/bc/v1/summary/top-intents',
      summary: 'Intents found in the range, most frequent first',
      description: `${RANGE} Counts Intent Informed events (one per intent per conversation); ties by name.`,
      response: topIntentsSchema,
      handler: (ctx) => withFrame(db, ctx, (f) => intentCounts(f, frameBins(f).window)),
    }),
    route({
      ...common,
      method: 'GET',
      url: '/bc/v1/summary/user-sentiment',
      summary: 'Conversations of the range by sentiment',
      description: `${RANGE} One slice per sentiment (positive, neutral, negative, always in that order) counting the conversations whose Conversation Summary falls in the range; percent 0–100.`,
      response: userSentimentSchema,
      handler: (ctx) =>
        withFrame(db, ctx, async (f) => {
          const counts = await sentimentCounts(f, frameBins(f).window);
          const total = SENTIMENTS.reduce((sum, s) => sum + (counts.get(s) ?? 0), 0);
          const n = (s: (typeof SENTIMENTS)[number]) => counts.get(s) ?? 0;
          return {
            chart_name: 'User Sentiment',
            slices: SENTIMENTS.map((label) => ({
              label,
              value: n(label),
              percent: percent(n(label), total),
            })),
            highlights: {
              positive_percent: percent(n('positive'), total),
              positive_total: n('positive'),
              negative_percent: percent(n('negative'), total),
              negative_total: n('negative'),
              neutral_percent: percent(n('neutral'), total),
              neutral_total: n('neutral'),
            },
          };
        }),
    }),
    route({
      ...common,
      method: 'GET',
      url: '/bc/v1/summary/user-conversations',
      summary: 'Conversations per bin: users, conversations, mean duration, prompts and intents',
      description: `${RANGE} A conversation counts in the bin of its Conversation Summary (when it closed). user_count: users with a conversation in the bin; unique_user_count: those whose first such conversation in the range is in the bin; average_duration in ms; average_prompt_count: turns; empty bins are zeros. ${DELTA}`,
      response: userConversationsSchema,
      handler: (ctx) =>
        withFrame(db, ctx, async (f) => {
          const { bins, window, previous } = frameBins(f);
          const now = await conversationFacts(f, window);
          const before = (await conversationFacts(f, previous)).get('');
          const total = now.get('');
          const delta = (k: 'duration' | 'prompts' | 'intents') => ({
            value: total?.[k] ?? 0,
            delta_percent: deltaPercent(total?.[k] ?? 0, before?.[k] ?? 0),
          });
          return {
            chart_name: 'User Conversations',
            points: bins.map(({ bin, key }) => {
              const r = now.get(key);
              return {
                start: bin.startIso,
                end: bin.endIso,
                user_count: r?.users ?? 0,
                unique_user_count: r?.new_users ?? 0,
                conversation_count: r?.conversations ?? 0,
                average_duration: r?.duration ?? 0,
                average_prompt_count: r?.prompts ?? 0,
                average_intents_per_conversation: r?.intents ?? 0,
              };
            }),
            highlights: {
              average_duration: delta('duration'),
              average_prompt_count: delta('prompts'),
              average_intents_per_conversation: delta('intents'),
            },
          };
        }),
    }),
    route({
      ...common,
      method: 'GET',
      url: '/bc/v1/summary/engagement',
      summary: 'Active and new users, conversations and intents per bin',
      description: `${RANGE} user_count: users with any stored event in the bin (generated ones included); new_user_count: users whose created_at is in the bin; conversation_count: Conversation Started events; intent_count: Intent Informed events. Totals count distinct users over the whole range. ${DELTA}`,
      response: engagementSchema,
      handler: (ctx) =>
        withFrame(db, ctx, async (f) => {
          const { bins, window, previous } = frameBins(f);
          const now = await engagementFacts(f, window);
          const before = (await engagementFacts(f, previous)).get('');
          const total = now.get('');
          const delta = (k: 'users' | 'new_users' | 'conversations' | 'intents') => ({
            value: total?.[k] ?? 0,
            delta_percent: deltaPercent(total?.[k] ?? 0, before?.[k] ?? 0),
          });
          return {
            chart_name: 'Engagement',
            points: bins.map(({ bin, key }) => {
              const r = now.get(key);
              return {
                start: bin.startIso,
                end: bin.endIso,
                user_count: r?.users ?? 0,
                new_user_count: r?.new_users ?? 0,
                conversation_count: r?.conversations ?? 0,
                intent_count: r?.intents ?? 0,
              };
            }),
            highlights: {
              total_user_count: delta('users'),
              total_new_user_count: delta('new_users'),
              total_conversation_count: delta('conversations'),
              total_intent_count: delta('intents'),
            },
          };
        }),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/summary/new-intents',
      tag: 'Summary',
      summary: 'Intents found in conversations that are not user-defined intents of the project',
      description:
        'Names of Intent Informed events (labelled on turns, for example) that no /udi intent has, whatever the case (as intent names are unique), archived ones included; sorted.',
      query: z.object({ organization_id: z.string().optional(), app_id: z.string().optional() }),
      response: newIntentsSchema,
      handler: ({ tenant, signal }) =>
        leaseRead(
          db,
          tenant,
          async (q) => {
            const rows = await q.all<{ name: string }>(
              `SELECT DISTINCT json_extract_string(e.properties, '/intent') AS name FROM events e
              WHERE e.project_id = $1 AND e.event = 'Intent Informed' AND json_extract_string(e.properties, '/intent') IS NOT NULL
                AND lower(json_extract_string(e.properties, '/intent')) NOT IN
                    (SELECT lower(name) FROM user_defined_intents WHERE project_id = $1)
              ORDER BY name`,
              [tenant.projectId],
            );
            return rows.map((r) => r.name);
          },
          signal,
        ),
    }),
  ];
}
