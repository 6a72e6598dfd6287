import { z } from 'zod';
import { CHART_PATHS, type ChartKind } from '../shared/chart-controls.js';
import { type Health, lenientHealthSchema } from '../shared/health.js';
import { REALTIME_PATH, type RealtimeResponse, realtimeResponseSchema } from '../shared/live-events.js';
import { type AliasBody, type IdentifyBody, type UserRecord, userRecordSchema } from '../shared/users.js';
import type { Client } from './http-client.js';

export * from './api-routes.js';

/**
 * One thin function per route: path, method and response schema live here and nowhere else, so a
 * command never spells a URL. Each takes the client first so commands receive it through `deps`.
 */

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * What the client accepts from `POST /events/queue`: looser than the service's own reply schema, since
 * the hosted service answers only `{status}` and our service adds the counts (decisions §4).
 */
export const queueAckSchema = z.object({
  status: z.string(),
  accepted: z.number().int().nonnegative().optional(),
  duplicates: z.number().int().nonnegative().optional(),
});
export type QueueAck = z.infer<typeof queueAckSchema>;

export const eventCountsSchema = z.array(z.number());

/**
 * Rows are checked only for being objects: the shared stored-event schema requires fields (`event`,
 * `timestamp`) that the hosted service's description leaves optional. Pass a schema to be stricter.
 */
export const liveEventsSchema = z.array(z.record(z.string(), z.unknown()));
export type LiveEvent = Record<string, unknown>;

export { CHART_KINDS, type ChartKind } from '../shared/chart-controls.js';

export interface EventCountRange {
  start: string;
  end: string;
  /** Accepted and ignored by our service; the hosted service requires them. */
  period?: string;
  tz?: string;
}

export interface EventCountFilters {
  session_id?: string;
  conversation_id?: string;
  event_name?: string;
}

export interface LiveEventsQuery {
  start: string;
  end: string;
  limit?: number;
  session_id?: string;
}

function signalOf(options: CallOptions | undefined): { signal?: AbortSignal } {
  return options?.signal ? { signal: options.signal } : {};
}

export function health(client: Client, options?: CallOptions): Promise<Health> {
  return client.request({
    method: 'GET',
    path: '/healthz',
    schema: lenientHealthSchema,
    ...signalOf(options),
  });
}

export function identify(client: Client, body: IdentifyBody, options?: CallOptions): Promise<UserRecord> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/user/identify',
    body,
    schema: userRecordSchema,
    ...signalOf(options),
  });
}

export function alias(client: Client, body: AliasBody, options?: CallOptions): Promise<UserRecord> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/user/alias',
    body,
    schema: userRecordSchema,
    ...signalOf(options),
  });
}

/** Retried like any request: the service stores each event_id once, so a repeat batch is harmless. */
export function postQueue(
  client: Client,
  events: readonly unknown[],
  options?: CallOptions & {
    /** Our service's `?history=true`: the batch is history (`cas import`), placed before final ends. */
    history?: boolean;
  },
): Promise<QueueAck> {
  return client.request({
    method: 'POST',
    path: '/bc/v1/events/queue',
    ...(options?.history ? { query: { history: 'true' } } : {}),
    body: events,
    schema: queueAckSchema,
    ...signalOf(options),
  });
}

/** The chart response schemas belong to src/shared; pass one to get a typed, checked result. */
export function getChart<T>(
  client: Client,
  kind: ChartKind,
  controls: unknown,
  options: CallOptions & { schema: z.ZodType<T> },
): Promise<T>;
export function getChart(
  client: Client,
  kind: ChartKind,
  controls: unknown,
  options?: CallOptions,
): Promise<unknown>;
export function getChart(
  client: Client,
  kind: ChartKind,
  controls: unknown,
  options?: CallOptions & { schema?: z.ZodType },
): Promise<unknown> {
  const req = {
    method: 'GET' as const,
    path: `/bc/v1/charts/${CHART_PATHS[kind]}`,
    query: { chartControls: controls },
    ...signalOf(options),
  };
  return options?.schema ? client.request({ ...req, schema: options.schema }) : client.request(req);
}

export function eventCounts(
  client: Client,
  ranges: readonly EventCountRange[],
  filters?: EventCountFilters,
  options?: CallOptions,
): Promise<number[]> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/event-counts',
    query: {
      ranges,
      session_id: filters?.session_id,
      conversation_id: filters?.conversation_id,
      event_name: filters?.event_name,
    },
    schema: eventCountsSchema,
    ...signalOf(options),
  });
}

export function liveEvents<T>(
  client: Client,
  query: LiveEventsQuery,
  options: CallOptions & { schema: z.ZodType<T> },
): Promise<T>;
export function liveEvents(
  client: Client,
  query: LiveEventsQuery,
  options?: CallOptions,
): Promise<LiveEvent[]>;
export function liveEvents(
  client: Client,
  query: LiveEventsQuery,
  options?: CallOptions & { schema?: z.ZodType },
): Promise<unknown> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/live-events/events',
    query: { start: query.start, end: query.end, limit: query.limit, session_id: query.session_id },
    schema: options?.schema ?? liveEventsSchema,
    ...signalOf(options),
  });
}

/** A short-lived key for the live-events socket (client/live-socket.ts), for the project or one session. */
export function realtime(
  client: Client,
  sessionId?: string,
  options?: CallOptions,
): Promise<RealtimeResponse> {
  return client.request({
    method: 'GET',
    path: REALTIME_PATH,
    query: { session_id: sessionId },
    schema: realtimeResponseSchema,
    // One attempt: the socket retries with its own backoff and, between attempts, looks for a
    // service that moved. The client's retries on a stopped service's port held a reconnect ~10 s
    // while the socket said "reconnecting in 0.7 s" (found by probing).
    attempts: 1,
    ...signalOf(options),
  });
}
