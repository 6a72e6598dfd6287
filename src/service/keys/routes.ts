import { z } from 'zod';
import {
  orgKeyAssociateSchema,
  orgKeyCreateSchema,
  orgKeyDeleteQuerySchema,
  orgKeyRecordSchema,
  orgKeysDeletedSchema,
} from '../../shared/orgkeys.js';
import { conflict, notFound, SecretProbeError, ServiceError } from '../errors.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import { type StoredKey, Tenants } from '../store/tenants.js';

const ABOUT =
  "Keys are stored as SHA-256 only: a new key's secret is in the answer that creates it and nowhere else; lists show apikey as the key id (key_ + 16 hex digits of the hash), which DELETE accepts as well as the secret. A key manages its own organization only (another organization_id: 403; there is no super-admin key). The data directory's own key (credentials.json) and cas serve --api-key are provisioned again at each start.";

function sameOrg(tenant: Scope, orgId: string): void {
  if (orgId !== tenant.orgId) {
    throw new ServiceError(403, 'forbidden', 'this key belongs to another organization than organization_id');
  }
}

function record(tenant: Scope, key: StoredKey, current: string | undefined, secret?: string) {
  const keyId = Tenants.keyId(key.keyHash);
  return {
    organization_id: tenant.orgId,
    apikey: secret ?? keyId,
    key_id: keyId,
    created_at: key.createdAt.toISOString(),
    label: key.label,
    current: key.keyHash === current,
  };
}

async function stored(tenants: Tenants, tenant: Scope, keyHash: string): Promise<StoredKey> {
  const key = (await tenants.listKeys(tenant.orgId)).find((k) => k.keyHash === keyHash);
  // Revoked between the write and this read by another request: say so rather than invent a record.
  if (!key) throw notFound('the key was revoked meanwhile');
  return key;
}

export function keyRoutes(tenants: Tenants) {
  const tag = 'Organization Keys';
  return [
    route({
      method: 'GET',
      url: '/bc/v1/orgkeys',
      tag,
      summary: "The organization's keys (ids, never secrets)",
      description: ABOUT,
      response: z.array(orgKeyRecordSchema),
      handler: async ({ tenant, request }) =>
        (await tenants.listKeys(tenant.orgId)).map((k) => record(tenant, k, request.keyHash)),
    }),
    route({
      method: 'POST',
      url: '/bc/v1/orgkeys',
      tag,
      summary: 'Create a key for the organization (the secret is shown this once)',
      description: `${ABOUT} rotate (our extension) names a key (secret or id) that the new one replaces: it is revoked in the same transaction (404 when the organization has no such key).`,
      body: orgKeyCreateSchema,
      response: orgKeyRecordSchema,
      refusals: { 404: 'The organization has no such key to rotate', 409: 'A key collision; try again' },
      handler: async ({ tenant, body, request }) => {
        sameOrg(tenant, body.organization_id);
        let replaces: string | undefined;
        if (body.rotate !== undefined) {
          replaces = await tenants.findKey(tenant.orgId, body.rotate);
          if (replaces === undefined) throw notFound('the organization has no such key to rotate');
        }
        const added = await tenants.addKey(tenant.orgId, {
          label: body.label,
          ...(replaces === undefined ? {} : { replaces }),
        });
        if (added === 'taken' || added === 'revoked')
          throw conflict('conflict', 'a key collision; try again');
        return record(tenant, await stored(tenants, tenant, added.keyHash), request.keyHash, added.secret);
      },
    }),
    route({
      method: 'PUT',
      url: '/bc/v1/orgkeys',
      tag,
      summary: 'Associate a key of your choosing (at least 16 characters) with the organization',
      description: `${ABOUT} A key another organization holds, or one revoked (by any organization), is a 409; one this organization holds already is answered as it is. The answer's apikey is the key id.`,
      body: orgKeyAssociateSchema,
      response: orgKeyRecordSchema,
      refusals: { 409: 'The key belongs to another organization, or was revoked' },
      handler: async ({ tenant, body, request }) => {
        sameOrg(tenant, body.organization_id);
        const added = await tenants.addKey(tenant.orgId, { secret: body.apikey, label: body.label });
        // One answer for both, and it spends the caller's failed sign-ins (http/server.ts): it tells a
        // guessed secret from a free one, and told another organization's live key from a revoked one,
        // without limit (found by probing).
        if (added === 'taken' || added === 'revoked') {
          throw new SecretProbeError(
            409,
            'conflict',
            'this key cannot be used: another organization holds it, or it was revoked; choose another',
            [{ path: 'apikey', message: 'held by another organization, or revoked' }],
          );
        }
        return record(tenant, await stored(tenants, tenant, added.keyHash), request.keyHash);
      },
    }),
    route({
      method: 'DELETE',
      url: '/bc/v1/orgkeys',
      tag,
      summary: 'Revoke a key, or every key but the one making the request',
      description: `${ABOUT} Without apikey, every key of the organization except the one making the request is revoked (so a caller cannot lock its organization out by accident); naming the caller's own key revokes it. 404 for a key the organization does not have.`,
      query: orgKeyDeleteQuerySchema,
      response: orgKeysDeletedSchema,
      refusals: { 404: 'The organization has no such key' },
      handler: async ({ tenant, query, request }) => {
        let hashes: string[];
        if (query.apikey === undefined) {
          hashes = (await tenants.listKeys(tenant.orgId))
            .map((k) => k.keyHash)
            .filter((h) => h !== request.keyHash);
        } else {
          const hash = await tenants.findKey(tenant.orgId, query.apikey);
          if (hash === undefined) throw notFound('the organization has no such key');
          hashes = [hash];
        }
        await tenants.revokeKeys(tenant.orgId, hashes);
        return { status: 'ok' as const, revoked: hashes.map((h) => Tenants.keyId(h)) };
      },
    }),
  ];
}
