import { z } from 'zod';
import { healthSchema } from '../../shared/health.js';
import { buildOpenApi } from '../http/openapi.js';
import { type RouteSpec, route } from '../http/route.js';

/** /healthz and the OpenAPI document; the document describes `routes` plus these two. */
export function metaRoutes(version: string, routes: () => ReadonlyArray<RouteSpec>) {
  let document: Record<string, unknown> | undefined;
  return [
    route({
      method: 'GET',
      url: '/healthz',
      tag: 'Meta',
      summary: 'Liveness and version',
      public: true,
      response: healthSchema,
      handler: async () => ({ status: 'ok' as const, version }),
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
