import type { Limits } from '../../shared/limits.js';
import { READ_LIMITS, type ReadLimits } from '../../shared/read-limits.js';
import { adminRoutes } from '../admin/routes.js';
import { chartRoutes } from '../charts/routes.js';
import type { RouteSpec } from '../http/route.js';
import type { Ingestor } from '../ingest/ingestor.js';
import { ingestRoutes } from '../ingest/routes.js';
import { otlpRoutes } from '../otlp/routes.js';
import { readRoutes } from '../read/index.js';
import type { Database } from '../store/database.js';
import type { Tenants } from '../store/tenants.js';
import { metaRoutes } from './meta.js';
import { publicApiRoutes } from './public-api.js';
import { userRoutes } from './users.js';

export interface RouteDeps {
  db: Database;
  version: string;
  ingestor: Ingestor;
  limits: Limits;
  /** Reader pool, query time and response-size budgets; READ_LIMITS when absent. */
  reads?: ReadLimits | undefined;
  /** `cas serve`'s server.json secret and the data directory it holds, proved on /healthz. */
  server?: { secret: string; dataDir: string } | undefined;
  /** Organizations, projects and keys: the /orgkeys routes manage the caller's organization's keys. */
  tenants?: Tenants | undefined;
  /** `GET /bc/v1/live-events/realtime` (service/live/), made with the service's socket keys. */
  live?: RouteSpec | undefined;
}

/** Every route of the service; each concern contributes its own list. */
export function allRoutes(deps: RouteDeps): RouteSpec[] {
  const routes: RouteSpec[] = [];
  routes.push(...metaRoutes(deps.version, () => routes, deps.server), ...userRoutes(deps.db));
  const reads = deps.reads ?? READ_LIMITS;
  const budget = { maxCells: reads.chartCells, maxBytes: reads.responseBytes };
  routes.push(...chartRoutes(deps.db, deps.limits, { budget }));
  routes.push(
    ...ingestRoutes(deps.ingestor, deps.limits, deps.db),
    ...otlpRoutes(deps.ingestor, deps.limits),
    ...adminRoutes(deps.db),
    ...readRoutes(deps.db, deps.limits, reads.responseBytes),
  );
  if (deps.live) routes.push(deps.live);
  routes.push(...publicApiRoutes(deps));
  return routes;
}
