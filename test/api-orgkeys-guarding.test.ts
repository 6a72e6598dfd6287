import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgKeyRecordSchema } from '../src/shared/orgkeys.js';
import { call, withQuery } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * Keys and tenants, as a second organization's client probed them (found by probing): what `/orgkeys`
 * tells of a guessed secret, keys that could never sign in, an empty `apikey`, and an
 * `organization_id` / `app_id` parameter naming another tenant than the credentials.
 */
const A = { apiKey: 'org-a-key-0000000001', projectId: 'proj-a' };
const as = (tenant: typeof A) => ({ authorization: `Bearer ${tenant.apiKey}`, 'x-app-id': tenant.projectId });

let t: TestService;
let orgA = '';
beforeAll(async () => {
  // A burst of 4 failed sign-ins per address, refilled slowly: the test can spend it.
  t = await startTestService(A, { limits: { authFailureBurst: 4, authFailureRatePerSecond: 0.01 } });
  const keys = await call(t, 'GET', '/bc/v1/orgkeys', undefined, as(A));
  orgA = orgKeyRecordSchema.array().parse(keys.json)[0]!.organization_id;
});
afterAll(() => t?.stop());

describe('organization_id and app_id parameters', () => {
  it('naming another tenant than the credentials is a 403, on every route, an empty one naming nothing', async () => {
    for (const path of [
      withQuery('/bc/v1/user/list', { app_id: 'proj-other' }),
      withQuery('/bc/v1/orgkeys', { organization_id: 'org-other' }),
      withQuery('/bc/v1/agg/event-names', { organization_id: 'org-other' }),
    ]) {
      const res = await call(t, 'GET', path, undefined, as(A));
      expect(res.status, path).toBe(403);
    }
    const own = await call(
      t,
      'GET',
      withQuery('/bc/v1/user/list', { app_id: A.projectId, organization_id: orgA }),
      undefined,
      as(A),
    );
    expect(own.status, JSON.stringify(own.json)).toBe(200);
    expect((await call(t, 'GET', '/bc/v1/user/list?app_id=', undefined, as(A))).status).toBe(200);
    const revoke = await call(
      t,
      'DELETE',
      withQuery('/bc/v1/orgkeys', { organization_id: 'org-other' }),
      undefined,
      as(A),
    );
    expect(revoke.status).toBe(403);
  });
});

describe('/orgkeys', () => {
  it('DELETE with an empty apikey is a 400, not "revoke every other key"', async () => {
    const made = await call(t, 'POST', '/bc/v1/orgkeys', { organization_id: orgA, label: 'spare' }, as(A));
    expect(made.status).toBe(200);
    const res = await call(t, 'DELETE', '/bc/v1/orgkeys?apikey=', undefined, as(A));
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ issues: [{ path: 'apikey' }] });
    const listed = orgKeyRecordSchema
      .array()
      .parse((await call(t, 'GET', '/bc/v1/orgkeys', undefined, as(A))).json);
    expect(listed.map((k) => k.label)).toContain('spare');
  });

  it('PUT refuses a key no request could sign in with, naming apikey', async () => {
    for (const apikey of [
      ' padded-key-0001 ',
      'Bearer bearerkey0000001',
      'clé-clé-clé-clé-clé-1',
      'tab\tkey-000000000001',
    ]) {
      const res = await call(t, 'PUT', '/bc/v1/orgkeys', { organization_id: orgA, apikey }, as(A));
      expect(res.status, apikey).toBe(400);
      expect(res.json, apikey).toMatchObject({ issues: [{ path: 'apikey' }] });
    }
    const inner = await call(
      t,
      'PUT',
      '/bc/v1/orgkeys',
      { organization_id: orgA, apikey: 'a key with spaces 01' },
      as(A),
    );
    expect(inner.status, JSON.stringify(inner.json)).toBe(200);
    expect(
      (await call(t, 'GET', '/bc/v1/orgkeys', undefined, { ...as(A), authorization: 'a key with spaces 01' }))
        .status,
    ).toBe(200);
  });

  it("PUT answers another organization's key and a revoked one alike, and spends failed sign-ins", async () => {
    const revoked = 'revoked-key-000000001';
    expect(
      (await call(t, 'PUT', '/bc/v1/orgkeys', { organization_id: orgA, apikey: revoked }, as(A))).status,
    ).toBe(200);
    expect(
      (await call(t, 'DELETE', withQuery('/bc/v1/orgkeys', { apikey: revoked }), undefined, as(A))).status,
    ).toBe(200);
    // The data directory's own key belongs to its own organization.
    const other = t.service.local.api_key;
    const taken = await call(t, 'PUT', '/bc/v1/orgkeys', { organization_id: orgA, apikey: other }, as(A));
    const gone = await call(t, 'PUT', '/bc/v1/orgkeys', { organization_id: orgA, apikey: revoked }, as(A));
    expect(taken.status).toBe(409);
    expect(gone.json).toEqual(taken.json);
    // The burst is 4: two spent above, two more, then the address is refused.
    for (let i = 0; i < 2; i++)
      expect(
        (await call(t, 'PUT', '/bc/v1/orgkeys', { organization_id: orgA, apikey: revoked }, as(A))).status,
      ).toBe(409);
    expect(
      (await call(t, 'PUT', '/bc/v1/orgkeys', { organization_id: orgA, apikey: revoked }, as(A))).status,
    ).toBe(429);
  });
});
