import type { RouteSpec } from '../http/route.js';
import type { Database } from '../store/database.js';
import { metaRoutes } from './meta.js';
import { userRoutes } from './users.js';

export interface RouteDeps {
  db: Database;
  version: string;
}

/** Every route of the service; each concern contributes its own list. */
export function allRoutes(deps: RouteDeps): RouteSpec[] {
  const routes: RouteSpec[] = [];
  routes.push(...metaRoutes(deps.version, () => routes), ...userRoutes(deps.db));
  return routes;
}
