import { z } from 'zod';
import { countParam, jsonParam, regexParam } from './api-params.js';
import { propertiesSchema, traitsSchema } from './primitives.js';

/**
 * User read routes (`/user/list`, `details`, `insights`, `conversation`, `event`). `user_id` is the
 * service's id (`u_…`); these routes also accept a caller id (current or alias) in its place.
 * Durations are milliseconds, times ISO 8601 UTC.
 */

const scalarRecord = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

export const userSummarySchema = z.object({
  id: z.string(),
  user_id: z.string(),
  aliases: z.array(z.string()),
  created_at: z.string(),
  traits: scalarRecord,
});
export type UserSummary = z.output<typeof userSummarySchema>;

export const USER_SORT_FIELDS = ['created_at', 'id', 'user_id'] as const;

export const userListQuerySchema = z.object({
  regex: regexParam.describe(
    'RE2 regex matched anywhere in the user id, any alias, or any trait value (not Lucene syntax)',
  ),
  // The reference's default (its description: "Default is 100000"); ours was 1000, a shorter list.
  limit: countParam(100_000, 100_000),
  offset: countParam(0, 10_000_000),
  sort: jsonParam(
    z.strictObject({ value: z.enum(USER_SORT_FIELDS), order: z.enum(['asc', 'desc']) }).optional(),
  ).describe('JSON {value: created_at|id|user_id, order: asc|desc}; default created_at asc'),
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
});

export const userListSchema = z.object({ users: z.array(userSummarySchema), total: z.number() });
export type UserList = z.output<typeof userListSchema>;

export const userPageQuerySchema = z.object({
  user_id: z.string().min(1).max(100),
  limit: countParam(100_000, 100_000),
  offset: countParam(0, 10_000_000),
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
});

export const storedEventSchema = z.object({
  organization_id: z.string(),
  app_id: z.string(),
  user_id: z.string(),
  event_id: z.string(),
  session_id: z.string(),
  conversation_id: z.string().optional(),
  origin_event_id: z.string().optional(),
  timestamp: z.string(),
  event: z.string(),
  properties: propertiesSchema,
  user_traits: traitsSchema,
});
export type StoredEvent = z.output<typeof storedEventSchema>;

export const userSessionSchema = z.object({
  session_id: z.string(),
  user_id: z.string(),
  started_at: z.string(),
  ended_at: z.string().describe('the end_session time, or the last event of a session still open'),
  duration: z.number(),
  attributes: scalarRecord,
  user_traits: scalarRecord,
  events: z.array(storedEventSchema),
});

export const userDetailsSchema = userSummarySchema.extend({ sessions: z.array(userSessionSchema) });
export type UserDetails = z.output<typeof userDetailsSchema>;

/**
 * What a client takes from `/user/details`: the hosted service's OpenAPI gives its sessions' events no
 * `organization_id`/`app_id` and leaves a session's `duration` out at will, and every valid hosted
 * answer failed `cas users show` (found by probing).
 */
export const userDetailsAnswerSchema = userSummarySchema.extend({
  sessions: z.array(
    userSessionSchema.extend({
      duration: z.number().optional(),
      events: z.array(
        storedEventSchema.extend({ organization_id: z.string().optional(), app_id: z.string().optional() }),
      ),
    }),
  ),
});
export type UserDetailsAnswer = z.output<typeof userDetailsAnswerSchema>;

export const userConversationSummarySchema = z.object({
  user_id: z.string(),
  session_id: z.string(),
  conversation_id: z.string(),
  started_at: z.string(),
  duration: z.number().optional(),
  sentiment: z.string(),
  summary: z.string(),
  successful_intents: z.number(),
  unsuccessful_intents: z.number(),
});

export const userInsightsSchema = userSummarySchema.extend({
  conversations: z.array(userConversationSummarySchema),
});
export type UserInsights = z.output<typeof userInsightsSchema>;

export const userConversationQuerySchema = userPageQuerySchema.extend({
  conversation_id: z.string().min(1).max(100),
  // Conversation ids are scoped to their session (decisions §4): with it, one conversation.
  session_id: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).max(100).optional()),
});
export const conversationTurnsSchema = z.array(z.object({ user: z.string(), assistant: z.string() }));

export const userEventQuerySchema = z.object({
  event_id: z.string().min(1).max(128),
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
});
