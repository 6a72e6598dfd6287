import { expect } from 'vitest';
import { type DemoEvent, demoEvents } from '../../src/service/db-api/demo-data.js';
import type { TestService } from './service.js';

/** Any method on the real service, JSON in and out, with the test tenant's headers unless overridden. */
export async function call(
  t: TestService,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      ...t.headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // plain text stays text
  }
  return { status: response.status, json };
}

/** `path?name=value&…`, objects as compact JSON (decisions §1). */
export function withQuery(path: string, query: Record<string, unknown>): string {
  const parts = Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`);
  return parts.length === 0 ? path : `${path}?${parts.join('&')}`;
}

/** GET expecting 200; returns the body. */
export async function ok<T = unknown>(
  t: TestService,
  path: string,
  query: Record<string, unknown> = {},
): Promise<T> {
  const res = await call(t, 'GET', withQuery(path, query));
  expect(res.status, `${path}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json as T;
}

/** Generated demo-like data (small), sent through the queue as a client would; returns what was sent. */
export async function ingestGenerated(
  t: TestService,
  options: { users: number; seed: number },
  headers: Record<string, string> = {},
): Promise<DemoEvent[]> {
  const events = demoEvents({ ...options, start: '2025-01-01', days: 14 });
  for (let i = 0; i < events.length; i += 1000) {
    const res = await call(t, 'POST', '/bc/v1/events/queue', events.slice(i, i + 1000), headers);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }
  return events;
}

type Props = Record<string, unknown>;
export const turnsOf = (events: DemoEvent[]) =>
  events.filter((e) => e.event === 'Conversation Turn') as Array<
    DemoEvent & { properties: Props; session_id: string; conversation_id: string; event_id: string }
  >;
export const identifies = (events: DemoEvent[]) =>
  events.filter((e) => e.type === 'identify') as Array<DemoEvent & { user_id: string; traits: Props }>;
