import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * Issue 18's coverage: every path and method of the hosted service's public description answers
 * on our service with something other than "no such route" (404 no route / 405), and our own
 * OpenAPI document describes it. Path parameters get plausible values; a 404 for an unknown resource
 * (an intent id, say) is an answer of the route, not a missing route.
 */

const REFERENCE = fileURLToPath(new URL('../../shared/reference/service-openapi.json', import.meta.url));
const SAMPLE_PARAMS: Record<string, string> = {
  collection: 'users',
  op: 'find',
  user_defined_intent_id: 'udi_unknown',
};

interface Operation {
  method: string;
  path: string;
}

function referenceOperations(): Operation[] {
  const doc = JSON.parse(readFileSync(REFERENCE, 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m))
      .map((m) => ({ method: m.toUpperCase(), path })),
  );
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService(undefined, { limits: { chartRatePerSecond: 10_000, chartBurst: 10_000 } });
});
afterAll(() => t.stop());

/** What each operation answered, by `METHOD path`: checked against our document below. */
const answered = new Map<string, Set<number>>();
function record(op: Operation, status: number): void {
  const key = `${op.method} ${op.path}`;
  answered.set(key, (answered.get(key) ?? new Set()).add(status));
}

it('answers every path and method of the public description (none is 404 "no route" or 405)', async () => {
  const operations = referenceOperations();
  expect(operations.length).toBeGreaterThanOrEqual(57);
  const missing: string[] = [];
  for (const op of operations) {
    const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => SAMPLE_PARAMS[name] ?? 'x');
    const withBody = op.method === 'POST' || op.method === 'PUT';
    const response = await fetch(`${t.url}${url}`, {
      method: op.method,
      headers: { ...t.headers, ...(withBody ? { 'content-type': 'application/json' } : {}) },
      ...(withBody ? { body: '{}' } : {}),
    });
    const text = await response.text();
    const noRoute = response.status === 405 || (response.status === 404 && text.includes('"no route '));
    if (noRoute) missing.push(`${op.method} ${op.path} → ${response.status}`);
    else record(op, response.status);
    if (withBody) {
      const wrongType = await fetch(`${t.url}${url}`, {
        method: op.method,
        headers: { ...t.headers, 'content-type': 'text/plain' },
        body: '{}',
      });
      await wrongType.text();
      record(op, wrongType.status);
    }
  }
  expect(
    missing,
    `routes of the public description this service does not answer:\n${missing.join('\n')}`,
  ).toEqual([]);
});

it('describes every one of them in its own OpenAPI document, under the interface version', async () => {
  const res = await t.get('/bc/v1/openapi.json');
  expect(res.status).toBe(200);
  // interface-spec §9.2: the description carries the interface's version (it carried cas's, 0.1.0).
  const reference = JSON.parse(readFileSync(REFERENCE, 'utf8')) as { info: { version: string } };
  expect((res.json as { info: { version: string } }).info.version).toBe(reference.info.version);
  const paths = (res.json as { paths: Record<string, Record<string, unknown>> }).paths;
  const undescribed = referenceOperations()
    .filter((op) => paths[op.path]?.[op.method.toLowerCase()] === undefined)
    .map((op) => `${op.method} ${op.path}`);
  expect(undescribed, `not in /bc/v1/openapi.json:\n${undescribed.join('\n')}`).toEqual([]);
});

// Found by probing: the receiver takes and answers protobuf (OTLP/HTTP), and the document said JSON only.
it('lists both media types of the OTLP receiver, for its requests and its answers', async () => {
  const res = await t.get('/bc/v1/openapi.json');
  type Content = { content: Record<string, unknown> };
  const paths = (
    res.json as {
      paths: Record<string, Record<string, { requestBody: Content; responses: Record<string, Content> }>>;
    }
  ).paths;
  const traces = paths['/v1/traces']?.post;
  const both = ['application/json', 'application/x-protobuf'];
  expect(Object.keys(traces?.requestBody.content ?? {})).toEqual(both);
  expect(Object.keys(traces?.responses['200']?.content ?? {})).toEqual(both);
  // Another route with a body stays JSON only.
  expect(Object.keys(paths['/bc/v1/events/queue']?.post?.requestBody.content ?? {})).toEqual([
    'application/json',
  ]);
});

/** Refusals of the routes' own making (an unknown id, a state conflict), which `{}` does not reach. */
async function refusals(): Promise<void> {
  const post = async (path: string, body: unknown, method = 'POST') => {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.text();
    record({ method, path }, res.status);
    return res.status;
  };
  const ended = {
    type: 'end_session',
    session_id: 'doc-ended',
    user_id: 'doc-user',
    timestamp: '2025-03-09T12:00:00Z',
  };
  expect(await post('/bc/v1/events/queue', [ended])).toBe(200);
  const late = { type: 'track', event: 'Late', session_id: 'doc-ended', timestamp: '2025-03-09T13:00:00Z' };
  expect(await post('/bc/v1/events/queue', [late])).toBe(409);
  expect(await post('/bc/v1/events/event/track', late)).toBe(409);
  const unknown = { type: 'alias', user_id: 'doc-new', previous_id: 'doc-nobody' };
  expect(await post('/bc/v1/events/event/alias', unknown)).toBe(404);
  expect(await post('/bc/v1/user/alias', { id: 'doc-new', previous_id: 'doc-nobody' })).toBe(404);
  expect(await post('/bc/v1/user/identify', { id: 'doc-other' })).toBe(200);
  expect(await post('/bc/v1/user/alias', { id: 'doc-other', previous_id: 'doc-user' })).toBe(409);
}

it('lists in its document every status each route answered, its own refusals included', async () => {
  await refusals();
  const res = await t.get('/bc/v1/openapi.json');
  const paths = (
    res.json as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
  ).paths;
  const unlisted = [...answered].flatMap(([key, statuses]) => {
    const [method = '', path = ''] = key.split(' ');
    const listed = paths[path]?.[method.toLowerCase()]?.responses ?? {};
    return [...statuses].filter((s) => listed[String(s)] === undefined).map((s) => `${key} → ${s}`);
  });
  expect(unlisted, `answered but not in /bc/v1/openapi.json:\n${unlisted.join('\n')}`).toEqual([]);
});

interface Parameter {
  name: string;
  required: boolean;
  schema?: { type?: string };
  content?: Record<string, { schema: { type?: string } }>;
}

// Found by probing with a client generated from the documents.
it('declares parameters as the service reads them: required ones required, objects as JSON, every one accepted', async () => {
  const cohortMissing = await fetch(`${t.url}/bc/v1/cohorts/evaluate?cohort_id=coh_nope`, {
    headers: t.headers,
  });
  await cohortMissing.text();
  record({ method: 'GET', path: '/bc/v1/cohorts/evaluate' }, cohortMissing.status);
  const res = await t.get('/bc/v1/openapi.json');
  const paths = (
    res.json as { paths: Record<string, Record<string, { parameters?: Parameter[]; responses: object }>> }
  ).paths;
  const param = (path: string, name: string) =>
    paths[path]?.get?.parameters?.find((p) => p.name === name) as Parameter | undefined;
  // The service answers 400 "is required" without them.
  expect(param('/bc/v1/charts/session-chart', 'chartControls')?.required).toBe(true);
  expect(param('/bc/v1/summary/event-counts', 'ranges')?.required).toBe(true);
  expect(param('/bc/v1/charts/session-chart', 'session_id')?.required).toBe(false);
  // Objects and arrays travel as compact JSON (decisions §1), not in OpenAPI's default exploded form.
  for (const [path, name, type] of [
    ['/bc/v1/summary/engagement', 'range', 'object'],
    ['/bc/v1/db/{collection}/{op}', 'filter', 'object'],
    ['/bc/v1/agg/user-trait-names', 'picks', 'array'],
  ] as const) {
    const p = param(path, name);
    expect(p?.schema, `${path} ${name}`).toBeUndefined();
    expect(p?.content?.['application/json']?.schema.type, `${path} ${name}`).toBe(type);
  }
  expect(paths['/bc/v1/cohorts/evaluate']?.get?.responses).toHaveProperty('404');
  expect(cohortMissing.status).toBe(404);
  expect(param('/bc/v1/agg/event-names', 'organization_id')).toBeDefined();
  expect(param('/bc/v1/agg/event-names', 'app_id')).toBeDefined();
});
