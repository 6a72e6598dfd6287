import { z } from 'zod';
import { jsonParam, scopeParams } from './api-params.js';
import { chartRangeSchema } from './chart-filters.js';

/**
 * Summary routes (`/summary/*`, event-counts aside). `range` is a chart range (JSON, or bracket form
 * `range[start]=…`), binned like the charts (decisions §6). Highlights' `delta_percent` compares the
 * range with the equally long range just before it (0 when that one is 0).
 */

export const summaryQuerySchema = z.object({
  range: jsonParam(chartRangeSchema).describe('JSON {start, end, period, tz}, as chartControls.range'),
  ...scopeParams,
});
export type SummaryQuery = z.output<typeof summaryQuerySchema>;

export const topIntentsSchema = z.array(z.object({ intent: z.string(), count: z.number() }));

const slice = z.object({ label: z.string(), value: z.number(), percent: z.number() });
export const userSentimentSchema = z.object({
  chart_name: z.string(),
  slices: z.array(slice),
  highlights: z.object({
    positive_percent: z.number(),
    positive_total: z.number(),
    negative_percent: z.number(),
    negative_total: z.number(),
    neutral_percent: z.number(),
    neutral_total: z.number(),
  }),
});
export type UserSentiment = z.output<typeof userSentimentSchema>;

const delta = z.object({ value: z.number(), delta_percent: z.number() });

export const userConversationsSchema = z.object({
  chart_name: z.string(),
  points: z.array(
    z.object({
      start: z.string(),
      end: z.string(),
      user_count: z.number(),
      unique_user_count: z.number(),
      conversation_count: z.number(),
      average_duration: z.number(),
      average_prompt_count: z.number(),
      average_intents_per_conversation: z.number(),
    }),
  ),
  highlights: z.object({
    average_duration: delta,
    average_prompt_count: delta,
    average_intents_per_conversation: delta,
  }),
});
export type UserConversations = z.output<typeof userConversationsSchema>;

export const engagementSchema = z.object({
  chart_name: z.string(),
  points: z.array(
    z.object({
      start: z.string(),
      end: z.string(),
      user_count: z.number(),
      new_user_count: z.number(),
      conversation_count: z.number(),
      intent_count: z.number(),
    }),
  ),
  highlights: z.object({
    total_user_count: delta,
    total_new_user_count: delta,
    total_conversation_count: delta,
    total_intent_count: delta,
  }),
});
export type Engagement = z.output<typeof engagementSchema>;

export const newIntentsSchema = z.array(z.string());
