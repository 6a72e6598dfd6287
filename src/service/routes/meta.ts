import { z } from 'zod';
import { healthSchema, SERVICE_FEATURES } from '../../shared/health.js';
import { buildOpenApi } from '../http/openapi.js';
import { type RouteSpec, route } from '../http/route.js';
import { isToken, serverProof } from '../server-identity.js';

const healthQuerySchema = z.object({
  challenge: z
    .string()
    .refine(isToken, 'expected 64 lowercase hex digits')
    .optional()
    .describe('a fresh random nonce; a `cas serve` answers it with `proof`'),
});

const provenHealthSchema = healthSchema.extend({
  proof: z
    .string()
    .optional()
    .describe('HMAC-SHA256 of the challenge under the secret in server.json (cas serve only)'),
});

/**
 * /healthz and the OpenAPI document; the document describes `routes` plus these two. With `server`
 * (a `cas serve`: its server.json secret and the data directory it holds), /healthz proves to the CLI
 * that it is the server named in that directory's server.json (server-identity.ts).
 */
export function metaRoutes(
  version: string,
  routes: () => ReadonlyArray<RouteSpec>,
  server?: { secret: string; dataDir: string },
) {
  let document: Record<string, unknown> | undefined;
  return [
    route({
      method: 'GET',
      url: '/healthz',
      tag: 'Meta',
      summary: 'Liveness and version',
      public: true,
      query: healthQuerySchema,
      response: provenHealthSchema,
      handler: async ({ query }) => ({
        status: 'ok' as const,
        version,
        features: [...SERVICE_FEATURES],
        ...(server !== undefined && query.challenge !== undefined
          ? { proof: serverProof(server.secret, query.challenge, server.dataDir) }
          : {}),
      }),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/openapi.json',
      tag: 'Meta',
      summary: 'This OpenAPI 3.1 description, generated from the validating zod schemas',
      response: z.record(z.string(), z.unknown()),
      handler: async () => {
        document ??= buildOpenApi(routes(), version);
        return document;
      },
    }),
  ];
}
