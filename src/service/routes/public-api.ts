import { cohortRoutes } from '../cohorts/routes.js';
import { dbApiRoutes } from '../db-api/routes.js';
import { discoveryRoutes } from '../discovery/routes.js';
import type { RouteSpec } from '../http/route.js';
import { udiRoutes } from '../intents/routes.js';
import { keyRoutes } from '../keys/routes.js';
import { summaryRoutes } from '../summaries/routes.js';
import { userApiRoutes } from '../users/routes.js';
import type { RouteDeps } from './index.js';

/**
 * The rest of the public description (issue 18): discovery, users, summaries, cohorts,
 * user-defined intents, organization keys and `/db`. Each concern keeps its routes in its folder.
 */
export function publicApiRoutes(deps: RouteDeps): RouteSpec[] {
  return [
    ...discoveryRoutes(deps.db),
    ...userApiRoutes(deps.db),
    ...summaryRoutes(deps.db),
    ...cohortRoutes(deps.db),
    ...udiRoutes(deps.db, deps.ingestor),
    ...(deps.tenants ? keyRoutes(deps.tenants) : []),
    ...dbApiRoutes(deps.db, deps.ingestor, deps.limits),
  ];
}
