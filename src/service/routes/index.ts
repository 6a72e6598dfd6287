import type { Limits } from '../../shared/limits.js';
import { chartRoutes } from '../charts/routes.js';
import type { RouteSpec } from '../http/route.js';
import type { Ingestor } from '../ingest/ingestor.js';
import { ingestRoutes } from '../ingest/routes.js';
import { readRoutes } from '../read/index.js';
import type { Database } from '../store/database.js';
import { metaRoutes } from './meta.js';
import { userRoutes } from './users.js';

export interface RouteDeps {
  db: Database;
  version: string;
  ingestor: Ingestor;
  limits: Limits;
}

/** Every route of the service; each concern contributes its own list. */
export function allRoutes(deps: RouteDeps): RouteSpec[] {
  const routes: RouteSpec[] = [];
  routes.push(...metaRoutes(deps.version, () => routes), ...userRoutes(deps.db));
  routes.push(...chartRoutes(deps.db, deps.limits));
  routes.push(...ingestRoutes(deps.ingestor, deps.limits), ...readRoutes(deps.db, deps.limits));
  return routes;
}
