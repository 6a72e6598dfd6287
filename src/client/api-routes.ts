import { z } from 'zod';
import { namesResponseSchema, type PickInput } from '../shared/agg.js';
import {
  type CohortBodyInput,
  type CohortRecord,
  cohortAnswerSchema,
  cohortMembersSchema,
} from '../shared/cohorts.js';
import { dbResultSchema, importDemoDataSchema } from '../shared/db-api.js';
import { type OrgKeyAnswer, orgKeyAnswerSchema, orgKeysDeletedAnswerSchema } from '../shared/orgkeys.js';
import {
  type Engagement,
  engagementSchema,
  newIntentsSchema,
  topIntentsSchema,
  type UserConversations,
  type UserSentiment,
  userConversationsSchema,
  userSentimentSchema,
} from '../shared/summaries.js';
import { type UdiBodyInput, type UdiRecord, udiAnswerSchema, udiDeletedAnswerSchema } from '../shared/udi.js';
import type { UserRecord } from '../shared/users.js';
import {
  conversationTurnsSchema,
  type StoredEvent,
  storedEventSchema,
  type UserDetailsAnswer,
  type UserInsights,
  type UserList,
  userDetailsAnswerSchema,
  userInsightsSchema,
  userListSchema,
} from '../shared/users-api.js';
import type { Client } from './http-client.js';

/**
 * Client functions of the discovery, user, summary, cohort, intent and key routes (issue 18), one per
 * route as in routes.ts: a command never spells a URL. Options are `{signal}` like the others.
 */

interface CallOptions {
  signal?: AbortSignal;
}
const sig = (o: CallOptions | undefined) => (o?.signal ? { signal: o.signal } : {});

export interface Scope {
  session_id?: string;
  conversation_id?: string;
}

export interface ChartRangeInput {
  start: string;
  end: string;
  period: 'day' | 'week' | 'month';
  tz: string;
}

function names(client: Client, path: string, query: object, o?: CallOptions) {
  return client.request({
    method: 'GET',
    path: `/bc/v1/agg/${path}`,
    query: query as Readonly<Record<string, unknown>>,
    schema: namesResponseSchema,
    ...sig(o),
  });
}

// --- discovery ---------------------------------------------------------------------------------

export function listEventNames(client: Client, q: { event_regex?: string } & Scope = {}, o?: CallOptions) {
  return names(client, 'event-names', q, o);
}
export function listProperties(
  client: Client,
  q: { event_regex?: string; property_regex?: string; picks?: PickInput[] } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'property-names', q, o);
}
export function listPropertyValues(
  client: Client,
  q: { event_regex?: string; property_name_regex?: string; property_value_regex?: string } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'property-values', q, o);
}
export function listTraits(
  client: Client,
  q: { event_regex?: string; trait_regex?: string; picks?: PickInput[] } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'trait-names', q, o);
}
export function listTraitValues(
  client: Client,
  q: { event_regex?: string; trait_name_regex?: string; trait_value_regex?: string } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'trait-values', q, o);
}
export function listUserTraits(
  client: Client,
  q: { id_regex?: string; trait_regex?: string; picks?: PickInput[] } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'user-trait-names', q, o);
}
export function listUserTraitValues(
  client: Client,
  q: { id_regex?: string; trait_regex?: string; trait_value_regex?: string } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'user-trait-values', q, o);
}
export function listIntentNames(client: Client, q: { intent_regex?: string } & Scope = {}, o?: CallOptions) {
  return names(client, 'intent-names', q, o);
}
export function listIntentAttributes(
  client: Client,
  q: { intent_regex?: string; attribute_regex?: string; picks?: PickInput[] } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'intent-attribute-names', q, o);
}
export function listIntentAttributeValues(
  client: Client,
  q: { intent_regex?: string; attribute_name_regex?: string; attribute_value_regex?: string } & Scope = {},
  o?: CallOptions,
) {
  return names(client, 'intent-attribute-values', q, o);
}

// --- users -------------------------------------------------------------------------------------

export function listUsers(
  client: Client,
  q: {
    regex?: string;
    limit?: number;
    offset?: number;
    sort?: { value: 'created_at' | 'id' | 'user_id'; order: 'asc' | 'desc' };
  } = {},
  o?: CallOptions,
): Promise<UserList> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/user/list',
    query: q,
    schema: userListSchema,
    ...sig(o),
  });
}

/** `userId`: the service id (`u_…`) or a caller id (current or alias). */
export function getUser(
  client: Client,
  userId: string,
  page: { limit?: number; offset?: number } = {},
  o?: CallOptions,
): Promise<UserDetailsAnswer> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/user/details',
    query: { user_id: userId, ...page },
    schema: userDetailsAnswerSchema,
    ...sig(o),
  });
}

export function getUserInsights(
  client: Client,
  userId: string,
  page: { limit?: number; offset?: number } = {},
  o?: CallOptions,
): Promise<UserInsights> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/user/insights',
    query: { user_id: userId, ...page },
    schema: userInsightsSchema,
    ...sig(o),
  });
}

export function getUserConversation(client: Client, userId: string, conversationId: string, o?: CallOptions) {
  return client.request({
    method: 'GET',
    path: '/bc/v1/user/conversation',
    query: { user_id: userId, conversation_id: conversationId },
    schema: conversationTurnsSchema,
    ...sig(o),
  });
}

export function getEvent(client: Client, eventId: string, o?: CallOptions): Promise<StoredEvent> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/user/event',
    query: { event_id: eventId },
    schema: storedEventSchema,
    ...sig(o),
  });
}

export function dbFind(
  client: Client,
  collection: string,
  op: 'find' | 'findOne',
  q: { filter?: object; projection?: object; sort?: object; skip?: number; limit?: number } = {},
  o?: CallOptions,
) {
  return client.request({
    method: 'GET',
    path: `/bc/v1/db/${encodeURIComponent(collection)}/${op}`,
    query: q,
    schema: dbResultSchema,
    ...sig(o),
  });
}

export function importDemoData(client: Client, o?: CallOptions) {
  return client.request({
    method: 'GET',
    path: '/bc/v1/db/import_demo_data',
    schema: importDemoDataSchema,
    ...sig(o),
  });
}

// --- summaries ---------------------------------------------------------------------------------

export function topIntents(client: Client, range: ChartRangeInput, scope: Scope = {}, o?: CallOptions) {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/top-intents',
    query: { range, ...scope },
    schema: topIntentsSchema,
    ...sig(o),
  });
}
export function userSentimentSummary(
  client: Client,
  range: ChartRangeInput,
  scope: Scope = {},
  o?: CallOptions,
): Promise<UserSentiment> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/user-sentiment',
    query: { range, ...scope },
    schema: userSentimentSchema,
    ...sig(o),
  });
}
export function userConversationsSummary(
  client: Client,
  range: ChartRangeInput,
  scope: Scope = {},
  o?: CallOptions,
): Promise<UserConversations> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/user-conversations',
    query: { range, ...scope },
    schema: userConversationsSchema,
    ...sig(o),
  });
}
export function engagementSummary(
  client: Client,
  range: ChartRangeInput,
  scope: Scope = {},
  o?: CallOptions,
): Promise<Engagement> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/engagement',
    query: { range, ...scope },
    schema: engagementSchema,
    ...sig(o),
  });
}
export function newIntents(client: Client, o?: CallOptions) {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/new-intents',
    schema: newIntentsSchema,
    ...sig(o),
  });
}

// --- cohorts -----------------------------------------------------------------------------------

export function listCohorts(client: Client, o?: CallOptions): Promise<CohortRecord[]> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/cohorts',
    schema: z.array(cohortAnswerSchema),
    ...sig(o),
  });
}
export function createCohort(client: Client, body: CohortBodyInput, o?: CallOptions): Promise<CohortRecord> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/cohorts',
    body,
    schema: cohortAnswerSchema,
    idempotent: false,
    ...sig(o),
  });
}
export function updateCohort(
  client: Client,
  cohortId: string,
  body: CohortBodyInput,
  o?: CallOptions,
): Promise<CohortRecord> {
  return client.request({
    method: 'PUT',
    path: '/bc/v1/cohorts',
    query: { cohort_id: cohortId },
    body,
    schema: cohortAnswerSchema,
    ...sig(o),
  });
}
export function deleteCohort(client: Client, cohortId: string, o?: CallOptions) {
  return client.request({
    method: 'DELETE',
    path: '/bc/v1/cohorts',
    query: { cohort_id: cohortId },
    // The hosted service answers 200 with no body.
    schema: z.object({ status: z.string(), cohort_id: z.string() }).optional(),
    idempotent: false,
    ...sig(o),
  });
}
export function getCohortByName(client: Client, name: string, o?: CallOptions): Promise<CohortRecord> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/cohorts/byName',
    query: { name },
    schema: cohortAnswerSchema,
    ...sig(o),
  });
}
export function getCohortById(client: Client, cohortId: string, o?: CallOptions): Promise<CohortRecord> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/cohorts/byId',
    query: { cohort_id: cohortId },
    schema: cohortAnswerSchema,
    ...sig(o),
  });
}
export function evaluateCohort(
  client: Client,
  cohortId: string,
  page: { skip?: number; limit?: number } = {},
  o?: CallOptions,
): Promise<UserRecord[]> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/cohorts/evaluate',
    query: { cohort_id: cohortId, ...page },
    schema: cohortMembersSchema,
    ...sig(o),
  });
}

// --- user-defined intents ----------------------------------------------------------------------

export function listIntents(client: Client, o?: CallOptions): Promise<UdiRecord[]> {
  return client.request({ method: 'GET', path: '/bc/v1/udi', schema: z.array(udiAnswerSchema), ...sig(o) });
}
export function getIntent(client: Client, id: string, o?: CallOptions): Promise<UdiRecord> {
  return client.request({
    method: 'GET',
    path: `/bc/v1/udi/${encodeURIComponent(id)}`,
    schema: udiAnswerSchema,
    ...sig(o),
  });
}
export function addIntent(client: Client, body: UdiBodyInput, o?: CallOptions): Promise<UdiRecord> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/udi',
    body,
    schema: udiAnswerSchema,
    idempotent: false,
    ...sig(o),
  });
}
export function updateIntent(
  client: Client,
  id: string,
  body: UdiBodyInput,
  o?: CallOptions,
): Promise<UdiRecord> {
  return client.request({
    method: 'PUT',
    path: `/bc/v1/udi/${encodeURIComponent(id)}`,
    body,
    schema: udiAnswerSchema,
    ...sig(o),
  });
}
export function removeIntent(client: Client, id: string, o?: CallOptions) {
  return client.request({
    method: 'DELETE',
    path: `/bc/v1/udi/${encodeURIComponent(id)}`,
    schema: udiDeletedAnswerSchema,
    idempotent: false,
    ...sig(o),
  });
}

// --- organization keys -------------------------------------------------------------------------
// Writes that make or remove something say `idempotent: false`: tried again after an answer was lost,
// a rotation revoked the key the retry authenticated with (403, the new secret never shown), a
// creation made a second key, a deletion answered 404 for what it had deleted (found by probing).

export function listKeys(client: Client, o?: CallOptions): Promise<OrgKeyAnswer[]> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/orgkeys',
    schema: z.array(orgKeyAnswerSchema),
    ...sig(o),
  });
}
/** The answer's `apikey` is the new secret, shown this once. */
export function createKey(
  client: Client,
  body: { organization_id: string; label?: string },
  o?: CallOptions,
): Promise<OrgKeyAnswer> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/orgkeys',
    body,
    schema: orgKeyAnswerSchema,
    idempotent: false,
    ...sig(o),
  });
}
/** A new key replacing `key` (secret or key id), which is revoked in the same step. */
export function rotateKey(
  client: Client,
  body: { organization_id: string; rotate: string; label?: string },
  o?: CallOptions,
): Promise<OrgKeyAnswer> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/orgkeys',
    body,
    schema: orgKeyAnswerSchema,
    idempotent: false,
    ...sig(o),
  });
}
/** `key`: secret or key id. */
export function revokeKey(client: Client, key: string, o?: CallOptions) {
  return client.request({
    method: 'DELETE',
    path: '/bc/v1/orgkeys',
    query: { apikey: key },
    schema: orgKeysDeletedAnswerSchema,
    idempotent: false,
    ...sig(o),
  });
}
