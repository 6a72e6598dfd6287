import { REPRICE_PATH, repriceBodySchema, repriceResponseSchema } from '../../shared/reprice.js';
import { route } from '../http/route.js';
import type { Database } from '../store/database.js';
import { reprice } from './reprice.js';

/** Our maintenance routes: `POST /bc/v1/admin/reprice`. */
export function adminRoutes(db: Database) {
  return [
    route({
      method: 'POST',
      url: REPRICE_PATH,
      tag: 'Admin',
      summary:
        "Our extension: recompute the project's stored token costs and conversation summaries with the service's price table (idempotent, one transaction)",
      body: repriceBodySchema,
      response: repriceResponseSchema,
      rate: 'ingest',
      handler: ({ tenant, body }) => reprice(db, tenant.projectId, body),
    }),
  ];
}
