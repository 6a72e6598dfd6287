import type { Client } from '../client/http-client.js';
import { createKey, listKeys, revokeKey, rotateKey } from '../client/routes.js';
import type { OrgKeyAnswer } from '../shared/orgkeys.js';
import { UsageError } from './errors.js';

/**
 * `cas keys list|create|revoke`: the organization's API keys (`/orgkeys`). The service keeps only
 * hashes, so a new key's secret is in `create`'s answer and nowhere else, ever; lists show key ids.
 * A key is created in the organization of the key making the request.
 */

export function runKeyList(_options: unknown, deps: { client: Client }): Promise<OrgKeyAnswer[]> {
  return listKeys(deps.client);
}

export async function runKeyCreate(
  options: { label?: string | undefined; rotate?: string | undefined },
  deps: { client: Client },
): Promise<OrgKeyAnswer> {
  const keys = await listKeys(deps.client);
  const organization = (keys.find((k) => k.current) ?? keys[0])?.organization_id;
  if (organization === undefined) throw new UsageError('the service lists no key of this organization');
  const label = options.label !== undefined ? { label: options.label } : {};
  if (options.rotate !== undefined) {
    return rotateKey(deps.client, { organization_id: organization, rotate: options.rotate, ...label });
  }
  return createKey(deps.client, { organization_id: organization, ...label });
}

export async function runKeyRevoke(
  options: { key: string },
  deps: { client: Client },
): Promise<{ status: string; revoked: string[] }> {
  if (options.key.trim() === '')
    throw new UsageError('cas keys revoke needs a key id or secret', 'see cas keys list');
  // The hosted service answers 200 with no body: the key named is what it revoked.
  return (await revokeKey(deps.client, options.key)) ?? { status: 'ok', revoked: [options.key] };
}
