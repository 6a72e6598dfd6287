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
