import {
  conversationTurnsSchema,
  storedEventSchema,
  type UserDetails,
  userConversationQuerySchema,
  userDetailsSchema,
  userEventQuerySchema,
  userInsightsSchema,
  userListQuerySchema,
  userListSchema,
  userPageQuerySchema,
} from '../../shared/users-api.js';
import { invalidInput, notFound } from '../errors.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import { re2Problem } from '../re2-check.js';
import { leaseRead } from '../read/lease.js';
import type { Database, Queryable } from '../store/database.js';
import { list } from '../store/statements.js';
import { eventDocs } from './events.js';
import { resolvePerson, userRecords } from './records.js';

const SORT = { created_at: 'b.created_at', id: 'b.primary_id', user_id: 'b.user_id' } as const;

/** A user id, any alias, or any trait value matching the RE2 regex ($2). */
const MATCHES = `(regexp_matches(b.primary_id, $2) OR regexp_matches(b.user_id, $2)
  OR EXISTS (SELECT 1 FROM json_each(b.traits) j WHERE regexp_matches(coalesce(j.value ->> '$', ''), $2))
  OR EXISTS (SELECT 1 FROM user_ids i JOIN users x ON x.project_id = i.project_id AND x.user_id = i.user_id
              WHERE i.project_id = b.project_id AND x.canonical_user_id = b.user_id AND regexp_matches(i.id, $2)))`;

async function summaryOf(q: Queryable, scope: Scope, person: string) {
  const { users } = await userRecords(q, scope, { where: 'b.user_id = $2', params: [person] });
  if (!users[0]) throw notFound(`no user "${person}" in this project`);
  const { organization_id: _o, app_id: _a, ...rest } = users[0];
  return rest;
}

/** The person's sessions (their merged anonymous users' included), oldest first. */
const SESSIONS = `FROM sessions s JOIN users u ON u.project_id = s.project_id AND u.user_id = s.user_id
  WHERE s.project_id = $1 AND u.canonical_user_id = $2`;

async function details(
  q: Queryable,
  scope: Scope,
  userId: string,
  limit: number,
  offset: number,
): Promise<UserDetails> {
  const person = await resolvePerson(q, scope, userId);
  const user = await summaryOf(q, scope, person);
  const sessions = await q.all<{
    session_id: string;
    started_at: Date;
    ended_at: Date | null;
    last_event_at: Date;
    attributes: string | null;
  }>(
    `SELECT s.session_id, s.started_at, s.ended_at, s.last_event_at, s.attributes::VARCHAR AS attributes ${SESSIONS}
      ORDER BY s.started_at, s.session_id LIMIT ${limit} OFFSET ${offset}`,
    [scope.projectId, person],
  );
  const events =
    sessions.length === 0
      ? []
      : await eventDocs(q, scope, 'list_contains($2, e.session_id)', [
          list(sessions.map((s) => s.session_id)),
        ]);
  const bySession = new Map<string, typeof events>();
  for (const e of events) {
    const list = bySession.get(e.session_id);
    if (list) list.push(e);
    else bySession.set(e.session_id, [e]);
  }
  return {
    ...user,
    sessions: sessions.map((s) => {
      const end = s.ended_at ?? s.last_event_at;
      return {
        session_id: s.session_id,
        user_id: user.id,
        started_at: s.started_at.toISOString(),
        ended_at: end.toISOString(),
        duration: end.getTime() - s.started_at.getTime(),
        attributes: s.attributes === null ? {} : (JSON.parse(s.attributes) as Record<string, string>),
        user_traits: user.traits,
        events: bySession.get(s.session_id) ?? [],
      };
    }),
  };
}

interface SummaryProps {
  turns?: number;
  duration_s?: number;
  intents?: string[];
  sentiment?: string;
  function_errors?: number;
}

async function insights(q: Queryable, scope: Scope, userId: string, limit: number, offset: number) {
  const person = await resolvePerson(q, scope, userId);
  const user = await summaryOf(q, scope, person);
  const rows = await q.all<{
    conversation_id: string;
    session_id: string;
    started_at: Date;
    ended_at: Date | null;
    summary: string | null;
  }>(
    `SELECT c.conversation_id, c.session_id, c.started_at, c.ended_at, sm.properties::VARCHAR AS summary
       FROM conversations c
       JOIN sessions s ON s.project_id = c.project_id AND s.session_id = c.session_id
       JOIN users u ON u.project_id = s.project_id AND u.user_id = s.user_id
       LEFT JOIN events sm ON sm.project_id = c.project_id AND sm.event = 'Conversation Summary'
        AND sm.session_id = c.session_id AND sm.conversation_id = c.conversation_id
      WHERE c.project_id = $1 AND u.canonical_user_id = $2
      ORDER BY c.started_at, c.session_id, c.conversation_id LIMIT ${limit} OFFSET ${offset}`,
    [scope.projectId, person],
  );
  return {
    ...user,
    conversations: rows.map((r) => {
      const p = (r.summary === null ? {} : JSON.parse(r.summary)) as SummaryProps;
      const intents = p.intents ?? [];
      const failed = (p.function_errors ?? 0) > 0 || p.sentiment === 'negative';
      const text =
        r.summary === null
          ? 'open: no summary until the conversation ends'
          : `${p.turns ?? 0} turns in ${p.duration_s ?? 0} s; intents: ${intents.join(', ') || 'none'}; sentiment: ${p.sentiment ?? 'neutral'}`;
      return {
        user_id: user.id,
        session_id: r.session_id,
        conversation_id: r.conversation_id,
        started_at: r.started_at.toISOString(),
        ...(r.ended_at === null ? {} : { duration: r.ended_at.getTime() - r.started_at.getTime() }),
        sentiment: p.sentiment ?? 'neutral',
        summary: text,
        successful_intents: failed ? 0 : intents.length,
        unsuccessful_intents: failed ? intents.length : 0,
      };
    }),
  };
}

export function userApiRoutes(db: Database) {
  return [
    route({
      method: 'GET',
      url: '/bc/v1/user/list',
      tag: 'User',
      summary: 'List users, optionally matching a regex',
      description:
        'regex is RE2 (run by DuckDB, not Lucene), matched anywhere in the primary id, the service id, any alias or any trait value. limit 100,000 by default, as the hosted service has it (at most 100,000); sort {value: created_at|id|user_id, order} (default created_at asc); total counts every match. Merged anonymous users are listed only through the user they were merged into.',
      query: userListQuerySchema,
      bracketQuery: true,
      response: userListSchema,
      handler: async ({ tenant, query, signal }) => {
        if (query.regex !== undefined) {
          const problem = await re2Problem(db.read, query.regex);
          if (problem) throw invalidInput([{ path: 'regex', message: problem }]);
        }
        const sort = query.sort ?? { value: 'created_at', order: 'asc' };
        const dir = sort.order === 'desc' ? 'DESC' : 'ASC';
        const result = await leaseRead(
          db,
          tenant,
          (q) =>
            userRecords(q, tenant, {
              ...(query.regex === undefined ? {} : { where: MATCHES, params: [query.regex] }),
              order: `${SORT[sort.value]} ${dir}, b.user_id ${dir}`,
              limit: query.limit,
              offset: query.offset,
            }),
          signal,
        );
        return {
          total: result.total,
          users: result.users.map(({ organization_id: _o, app_id: _a, ...u }) => u),
        };
      },
    }),
    route({
      method: 'GET',
      url: '/bc/v1/user/details',
      tag: 'User',
      summary: "A user's record and sessions with their events",
      description:
        'user_id: the service id (u_…) or any caller id the user has had. Sessions oldest first, paged by limit (100,000 by default) and offset; ended_at of an open session is its last event; durations in ms; user_traits are the current traits (no history is kept).',
      query: userPageQuerySchema,
      response: userDetailsSchema,
      refusals: { 404: 'No such user in this project' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(db, tenant, (q) => details(q, tenant, query.user_id, query.limit, query.offset), signal),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/user/insights',
      tag: 'User',
      summary: "A user's conversations with their sentiment and intents",
      description:
        "From each conversation's Conversation Summary: sentiment, a one-line summary (turns, duration, intents, sentiment), and its intents counted as successful, or unsuccessful when the conversation had a failed function call or negative sentiment. Open conversations: neutral, no duration.",
      query: userPageQuerySchema,
      response: userInsightsSchema,
      refusals: { 404: 'No such user in this project' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(db, tenant, (q) => insights(q, tenant, query.user_id, query.limit, query.offset), signal),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/user/conversation',
      tag: 'User',
      summary: "The turns of one of a user's conversations",
      description:
        'Conversation Turn events in time order (those of one instant in the order they came), as {user, assistant} texts; conversation ids are scoped to sessions, so every session of the user holding that id contributes, or only session_id when given. 404 for an unknown user; [] for a conversation they do not have.',
      query: userConversationQuerySchema,
      response: conversationTurnsSchema,
      refusals: { 404: 'No such user in this project' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(
          db,
          tenant,
          async (q) => {
            const person = await resolvePerson(q, tenant, query.user_id);
            // session_id was ignored: "None" (the Python client's unnamed conversation) joined them all.
            const one = query.session_id === undefined ? '' : ' AND e.session_id = $4';
            const turns = await eventDocs(
              q,
              tenant,
              `e.event = 'Conversation Turn' AND e.conversation_id = $2 AND e.session_id IN (SELECT s.session_id ${SESSIONS.replace('$2', '$3')})${one}`,
              [query.conversation_id, person, ...(query.session_id === undefined ? [] : [query.session_id])],
              { limit: query.limit, offset: query.offset },
            );
            return turns.map((t) => ({
              user: typeof t.properties.user === 'string' ? t.properties.user : '',
              assistant: typeof t.properties.assistant === 'string' ? t.properties.assistant : '',
            }));
          },
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/user/event',
      tag: 'User',
      summary: 'One stored event by its event_id',
      description: 'Generated events (Conversation Summary, Intent Informed, …) have ids too. 404 when none.',
      query: userEventQuerySchema,
      response: storedEventSchema,
      refusals: { 404: 'No such user, or no such event, in this project' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(
          db,
          tenant,
          async (q) => {
            const [event] = await eventDocs(q, tenant, 'e.event_id = $2', [query.event_id], { limit: 1 });
            if (!event) throw notFound(`no event "${query.event_id}" in this project`);
            return event;
          },
          signal,
        ),
    }),
  ];
}
