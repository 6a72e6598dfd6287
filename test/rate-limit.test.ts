import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService(undefined, { limits: { ingestRatePerSecond: 5, ingestBurst: 5 } });
  await t.service.tenants.provision({ apiKey: 'other-key', projectId: 'other-project' });
});
afterAll(() => t.stop());

async function identifyWithHeaders(headers?: Record<string, string>) {
  const response = await fetch(`${t.url}/bc/v1/user/identify`, {
    method: 'POST',
    headers: { ...t.headers, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ id: 'rl' }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.json(),
  };
}

describe('rate limiting per key (decisions §2)', () => {
  it('answers 429 with Retry-After and a JSON body once the burst is spent, per key', async () => {
    // All at once: one after another, on a loaded machine each took long enough (>= 200 ms) for
    // the bucket to refill between them, and none was refused.
    const results = await Promise.all(Array.from({ length: 12 }, () => identifyWithHeaders()));
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(5);
    const refused = results.find((r) => r.status === 429);
    expect(refused).toBeDefined();
    expect(Number(refused?.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused?.body).toMatchObject({ status: 429, code: 'rate_limited' });

    // Another organization's key has its own bucket.
    const other = await identifyWithHeaders({
      authorization: 'Bearer other-key',
      'x-app-id': 'other-project',
    });
    expect(other.status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await identifyWithHeaders()).status).toBe(200);
  });

  it('does not spend the budget on unauthenticated requests', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await identifyWithHeaders({ authorization: 'Bearer wrong' })).status).toBe(403);
    }
  });
});
