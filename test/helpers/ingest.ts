import { expect } from 'vitest';
import { liveEventsResponseSchema, queueResponseSchema, type StoredEvent } from '../../src/shared/events.js';
import { userRecordSchema } from '../../src/shared/users.js';
import type { TestService } from './service.js';

/**
 * Clients that talk to the service the way the hosted service's own clients do: the Python client
 * posts one event object per `POST /events/queue` with `Authorization: Bearer <key>`; the JavaScript
 * client posts each event to its per-event route with the bare key.
 */
export function pythonClient(t: TestService) {
  const headers = { authorization: `Bearer ${t.apiKey}`, 'x-app-id': t.projectId };
  return async (event: Record<string, unknown>) => {
    const res = await t.post('/bc/v1/events/queue', event, headers);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return queueResponseSchema.parse(res.json);
  };
}

export function jsClient(t: TestService) {
  const headers = { authorization: t.apiKey, 'x-app-id': t.projectId };
  return async (route: string, event: Record<string, unknown>) => {
    const res = await t.post(`/bc/v1/events/event/${route}`, event, headers);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(Array.isArray(res.json)).toBe(true);
    return res.json as Array<Record<string, unknown>>;
  };
}

/** Every stored row of a session (or all), oldest first, as live events lists them. */
export async function storedEvents(t: TestService, sessionId?: string): Promise<StoredEvent[]> {
  const scope = sessionId === undefined ? '' : `&session_id=${encodeURIComponent(sessionId)}`;
  const res = await t.get(`/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&limit=10000${scope}`);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return liveEventsResponseSchema.parse(res.json).reverse();
}

export async function userById(t: TestService, id: string) {
  const res = await t.post('/bc/v1/user/identify', { id });
  expect(res.status).toBe(200);
  return userRecordSchema.parse(res.json);
}

/** Posts a batch to the queue and returns status and body. */
export function queue(t: TestService, events: unknown) {
  return t.post('/bc/v1/events/queue', events);
}

/** An ISO time `s` seconds after a fixed start, for imported-history timestamps. */
export const at = (s: number, base = '2025-03-09T12:00:00Z') =>
  new Date(Date.parse(base) + s * 1000).toISOString();

export const turn = (session: string, ts: string, properties: Record<string, unknown>, extra = {}) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: session,
  timestamp: ts,
  properties: { user: 'hello', assistant: 'hi there', ...properties },
  ...extra,
});

export function byName(events: readonly StoredEvent[], name: string): StoredEvent[] {
  return events.filter((e) => e.event === name);
}
