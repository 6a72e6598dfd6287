import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import { hashKey, type Tenants } from '../store/tenants.js';

function header(request: FastifyRequest, name: string): string {
  const value = request.headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
}

/**
 * decisions §1: `Bearer <key>` or the bare key, plus X-App-ID; missing → 401, wrong → 403.
 * `Bearer ` with nothing after it is an empty key (401), not the key "Bearer": the header value
 * arrives trimmed, so the scheme can be the whole of it.
 */
export function authenticate(request: FastifyRequest, tenants: Tenants): { tenant: Scope; keyHash: string } {
  const authorization = header(request, 'authorization');
  const apiKey = authorization.replace(/^bearer(\s+|$)/i, '').trim();
  const projectId = header(request, 'x-app-id');
  if (apiKey === '' || projectId === '') {
    throw new ServiceError(
      401,
      'unauthorized',
      'missing credentials: send "Authorization: Bearer <key>" and "X-App-ID: <project>"',
    );
  }
  const tenant = tenants.authenticate(apiKey, projectId);
  if (tenant === 'forbidden') {
    throw new ServiceError(403, 'forbidden', 'the API key is unknown or does not own this project');
  }
  return { tenant, keyHash: hashKey(apiKey) };
}

/**
 * The spec's optional `organization_id` / `app_id` query parameters name the tenant the credentials
 * name: another was ignored, and the headers' project answered for it (found by probing). An empty
 * value names nothing.
 */
export function checkNamedTenant(query: unknown, tenant: Scope): void {
  const problem = namedOtherTenant(query, tenant);
  if (problem !== undefined) throw new ServiceError(403, 'forbidden', problem);
}

/** Why the query names another tenant than `tenant`, if it does (the live socket's handshake asks too). */
export function namedOtherTenant(query: unknown, tenant: Scope): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const q = query as Record<string, unknown>;
  const other = (value: unknown, own: string) =>
    (Array.isArray(value) ? value : [value]).some((v) => v !== undefined && v !== '' && v !== own);
  if (other(q.app_id, tenant.projectId)) return 'app_id names another project than X-App-ID';
  if (other(q.organization_id, tenant.orgId))
    return "organization_id names another organization than the API key's";
  return undefined;
}
