import { z } from 'zod';
import type { Issue } from '../../shared/errors.js';
import {
  EVENT_ROUTE_NAMES,
  type EventRoute,
  eventRouteInputSchema,
  parseQueueBody,
  parseRouteEvent,
  type QueueResponse,
  queueResponseSchema,
  routeResponseSchema,
} from '../../shared/events.js';
import type { Limits } from '../../shared/limits.js';
import { invalidInput } from '../errors.js';
import { checkedBodyBytes } from '../http/json-body.js';
import { documentedAs } from '../http/openapi.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import type { Database } from '../store/database.js';
import type { EventSource, Ingestor } from './ingestor.js';
import { repeatAnswer } from './repeat-answer.js';

/**
 * A body schema that documents `shape` in the OpenAPI description but accepts anything: the handler
 * validates with the shared dispatchers instead, whose issues name one event kind's fields (a union
 * would report every branch) and are capped for a 2,000-event queue body.
 */
const documented = (shape: z.ZodType): z.ZodType<unknown> => documentedAs(z.unknown(), shape);

const withoutIndex = (issue: Issue): Issue => ({ ...issue, path: issue.path.replace(/^\[0\]\.?/, '') });

function eventUrl(name: EventRoute): string {
  return name === 'event' ? '/bc/v1/events/event' : `/bc/v1/events/event/${name}`;
}

/**
 * The queue route's work once the caller is known: the one path from a batch to the ingest core, for
 * HTTP and for the embedded service's in-process callers (local-queue.ts) alike. `checkedBytes`: the
 * body's JSON size when our parser read it (and refused reserved keys), see QueueOptions.
 */
export async function queueEvents(
  ingestor: Ingestor,
  limits: Limits,
  tenant: Scope,
  body: unknown,
  checkedBytes: number | undefined,
  history = false,
): Promise<QueueResponse> {
  return queueBatch(
    ingestor,
    tenant,
    () => {
      const parsed = parseQueueBody(body, {
        eventsPerRequest: limits.eventsPerRequest,
        eventBytes: limits.eventBytes,
        checkedBytes,
      });
      if (!parsed.ok) throw invalidInput(parsed.issues);
      return parsed.events;
    },
    history,
  );
}

/**
 * The queue route's answer for a batch: its events, or a thunk that parses them when their turn comes
 * (`queueEvents`). local-queue.ts hands over the events its in-process sender already parsed with
 * `parseQueueBody` under this service's limits, so the ingest core and the answer stay the route's.
 */
export async function queueBatch(
  ingestor: Ingestor,
  tenant: Scope,
  events: EventSource,
  history = false,
): Promise<QueueResponse> {
  const result = await ingestor.ingest(tenant, events, Date.now(), history ? { history } : {});
  return { status: 'ok', accepted: result.accepted, duplicates: result.duplicates };
}

const queueQuerySchema = z.object({
  history: z
    .enum(['true', 'false'])
    .optional()
    .describe(
      'our extension, sent by `cas import`: the batch is history, so an event older than a final end of its session or conversation is placed before that end (the session is replayed) instead of refused with 409',
    ),
});

const STATE_CONFLICT =
  'An event the state refuses (session_ended, conversation_closed, another user in the session, …): nothing stored';

/** POST /bc/v1/events/queue and the per-event routes of decisions §4. */
export function ingestRoutes(ingestor: Ingestor, limits: Limits, db: Database) {
  const anyEvent = eventRouteInputSchema('event');
  const queue = route({
    method: 'POST',
    url: '/bc/v1/events/queue',
    tag: 'Events',
    summary: 'Store a batch of events (or one event object) in one transaction; answers after the commit',
    query: queueQuerySchema,
    body: documented(z.union([z.array(anyEvent), anyEvent])),
    response: queueResponseSchema,
    rate: 'ingest',
    refusals: { 409: STATE_CONFLICT },
    handler: ({ tenant, body, query }) =>
      queueEvents(ingestor, limits, tenant, body, checkedBodyBytes(body), query.history === 'true'),
  });
  const perEvent = EVENT_ROUTE_NAMES.map((name) =>
    route({
      method: 'POST',
      url: eventUrl(name),
      tag: 'Events',
      summary:
        name === 'event'
          ? 'Store one event of any kind; answers with it as stored plus the events it generated'
          : `Store one ${name.replace('-', ' ')} event; answers with it as stored plus the events it generated`,
      body: documented(eventRouteInputSchema(name)),
      response: routeResponseSchema,
      rate: 'ingest',
      refusals:
        name === 'alias' || name === 'event'
          ? { 404: 'No user has the previous_id', 409: `${STATE_CONFLICT}; or the new id is another user's` }
          : { 409: STATE_CONFLICT },
      handler: async ({ tenant, body }) => {
        const receivedAt = Date.now();
        let eventId: string | undefined;
        const event = () => {
          const parsed = parseRouteEvent(name, body, limits.eventBytes);
          if (!parsed.ok) throw invalidInput(parsed.issues);
          eventId = parsed.value.event_id;
          return [parsed.value];
        };
        const result = await ingestor.ingest(tenant, event, receivedAt, {
          paths: withoutIndex,
          answer: true,
        });
        // A repeat stored nothing: it is answered with the event stored under its id.
        if (result.duplicates > 0 && eventId !== undefined) return repeatAnswer(db, tenant, eventId);
        return result.answer ?? [];
      },
    }),
  );
  return [queue, ...perEvent];
}
