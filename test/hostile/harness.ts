import { expect } from 'vitest';
import { ERROR_CODES, errorBodySchema } from '../../src/shared/errors.js';
import type { TestService } from '../helpers/service.js';

/** One hostile request: its body goes on the wire byte for byte (a Buffer is never re-encoded). */
export interface HostileCase {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query exactly as sent; the caller chooses the percent-encoding. */
  path: string;
  body?: string | Buffer;
  /** Omitted: application/json when there is a body. `null`: no content-type header at all. */
  contentType?: string | null;
  /** Replaces the tenant's credentials (empty string: header absent). */
  headers?: Record<string, string>;
  /** A specific status when the contract names one; otherwise any 4xx. */
  status?: number;
}

export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
}

/** Generous: a slow answer is tolerable, a hang is the defect, so each request has its own deadline. */
const TIMEOUT_MS = 15_000;

export async function send(t: TestService, c: HostileCase): Promise<RawResponse> {
  const headers: Record<string, string> = { ...t.headers };
  if (c.body !== undefined && c.contentType !== null)
    headers['content-type'] = c.contentType ?? 'application/json';
  for (const [name, value] of Object.entries(c.headers ?? {})) {
    if (value === '') delete headers[name];
    else headers[name] = value;
  }
  const response = await fetch(`${t.url}${c.path}`, {
    method: c.method,
    headers,
    ...(c.body !== undefined ? { body: typeof c.body === 'string' ? c.body : new Uint8Array(c.body) } : {}),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

/** decisions §1: a 4xx whose JSON body is {status, code, message}, the message one line, no stack. */
export function expectRefusal(c: HostileCase, res: RawResponse): void {
  const where = `${c.name}: ${res.status} ${res.text.slice(0, 300)}`;
  if (c.status !== undefined) expect(res.status, where).toBe(c.status);
  expect(res.status, where).toBeGreaterThanOrEqual(400);
  expect(res.status, where).toBeLessThan(500);
  expect(res.contentType, where).toMatch(/^application\/json/);
  const body = errorBodySchema.parse(JSON.parse(res.text));
  expect(body.status, where).toBe(res.status);
  expect(ERROR_CODES).toContain(body.code);
  expectOneLine(body.message, where);
}

export function expectOneLine(message: string, where = message): void {
  expect(message.length, where).toBeGreaterThan(0);
  expect(message.length, where).toBeLessThanOrEqual(1000);
  expect(message, where).not.toMatch(/[\r\n\u2028\u2029]/);
  expect(message, where).not.toMatch(/\bat .+:\d+:\d+/);
}

/** Everything a project holds, as the routes and the tables show it; equal before and after = nothing changed. */
export async function snapshot(t: TestService, projectId: string, apiKey = t.apiKey): Promise<unknown> {
  const scope = { authorization: `Bearer ${apiKey}`, 'x-app-id': projectId };
  const live = await t.get('/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&limit=10000', scope);
  const ranges = encodeURIComponent(JSON.stringify([{ start: '2000-01-01', end: '2100-01-01' }]));
  const counts = await t.get(`/bc/v1/summary/event-counts?ranges=${ranges}`, scope);
  const names = await t.get('/bc/v1/agg/event-names', scope);
  const tables: Record<string, unknown> = {};
  for (const table of ['users', 'user_ids', 'devices', 'sessions', 'conversations', 'events']) {
    const rows = await t.service.db.read.all(
      `SELECT * EXCLUDE (project_id) FROM ${table} WHERE project_id = $1 ORDER BY ALL`,
      [projectId],
    );
    tables[table] = JSON.parse(
      JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
    );
  }
  for (const res of [live, counts, names]) expect(res.status).toBe(200);
  return { live: live.json, counts: counts.json, names: names.json, tables };
}

/** `{"key":value, ...rest}`: a raw JSON text, so duplicate and reserved keys survive as sent. */
export function withLeadingKey(body: unknown, key: string, valueText: string): string {
  const text = JSON.stringify(body);
  const at = text.indexOf('{');
  const rest = text.slice(at + 1);
  return `${text.slice(0, at + 1)}${JSON.stringify(key)}:${valueText}${rest.startsWith('}') ? '' : ','}${rest}`;
}

export const nested = (depth: number, leaf = '1'): string =>
  `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
