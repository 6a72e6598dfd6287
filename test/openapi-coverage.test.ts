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
  }
  expect(
    missing,
    `routes of the public description this service does not answer:\n${missing.join('\n')}`,
  ).toEqual([]);
});

it('describes every one of them in its own OpenAPI document', async () => {
  const res = await t.get('/bc/v1/openapi.json');
  expect(res.status).toBe(200);
  const paths = (res.json as { paths: Record<string, Record<string, unknown>> }).paths;
  const undescribed = referenceOperations()
    .filter((op) => paths[op.path]?.[op.method.toLowerCase()] === undefined)
    .map((op) => `${op.method} ${op.path}`);
  expect(undescribed, `not in /bc/v1/openapi.json:\n${undescribed.join('\n')}`).toEqual([]);
});
