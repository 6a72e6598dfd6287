import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ErrorBody } from '../../shared/errors.js';
import type { Limits } from '../../shared/limits.js';
import { LIVE_CLOSE, LIVE_LIMITS, LIVE_SOCKET_PATH, type LiveLimits } from '../../shared/live-events.js';
import { clientErrorHandler } from '../http/client-errors.js';
import { keepTimeoutsWhileClosing } from '../http/closing-timeouts.js';
import { guardConnections } from '../http/connection-guard.js';
import { listenerTimeouts } from '../http/listener-timeouts.js';
import type { RouteSpec } from '../http/route.js';
import type { CommitListener } from '../ingest/commit-listener.js';
import type { Queryable } from '../store/database.js';
import { rows, text } from '../store/statements.js';
import type { Tenants } from '../store/tenants.js';
import { LiveFeed } from './feed.js';
import { LiveHub } from './hub.js';
import { realtimeRoute } from './routes.js';
import { liveSockets } from './socket-route.js';
import { type LiveScope, LiveTokens } from './token.js';

export interface LiveEvents {
  /** `GET /bc/v1/live-events/realtime`, for the service's route list. */
  route: RouteSpec;
  /** The ingestor's `onCommitted`. */
  committed: CommitListener;
  /** Accepts sockets on the service's own port and reports ingest refusals; call before listen. */
  install(app: FastifyInstance): void;
  /** `cas serve --ws-port`: a second listener for sockets only; resolves to its ws:// URL. */
  listen(host: string, port: number, limits: Limits): Promise<string>;
  /** Open sockets (tests). */
  sockets(): number;
}

const INGEST_ROUTE = /^\/bc\/v1\/events\//;

/** The one thing the service's own port says to a plain request on the `--ws-port` listener. */
function notHere(res: import('node:http').ServerResponse): void {
  const body: ErrorBody = {
    status: 404,
    code: 'not_found',
    message: `this port serves only the live-events websocket (at / or ${LIVE_SOCKET_PATH})`,
  };
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
  res.end(JSON.stringify(body));
}

/** Live events for one service: tokens, the hub of sockets, the feed from ingest, and the listeners. */
export function liveEvents(options: {
  reader: Queryable;
  log: (line: string) => void;
  limits?: Partial<LiveLimits> | undefined;
  /** The API keys: a token of a revoked key opens no socket, and its open sockets are closed. */
  keys: Pick<Tenants, 'keyIdsOf' | 'onKeysChanged'>;
}): LiveEvents {
  const limits = { ...LIVE_LIMITS, ...options.limits };
  const hub = new LiveHub();
  const tokens = new LiveTokens();
  const feed = new LiveFeed(hub, options.reader, options.log);
  const keyActive = (scope: LiveScope) =>
    scope.keyTag === undefined ||
    options.keys.keyIdsOf(scope.orgId).some((id) => tokens.keyTag(id) === scope.keyTag);
  const sessionEnded = async (projectId: string, sessionId: string) =>
    (
      await rows(
        options.reader,
        'SELECT 1 AS ended FROM sessions WHERE project_id = $1 AND session_id = $2 AND ended_at IS NOT NULL',
        [text(projectId), text(sessionId)],
      )
    ).length > 0;
  const sockets = liveSockets({ hub, tokens, keyActive, sessionEnded, log: options.log, ...limits });
  options.keys.onKeysChanged(() =>
    hub.closeWhere(
      (scope) => !keyActive(scope),
      LIVE_CLOSE.revoked,
      'the API key this socket was opened with was revoked',
    ),
  );
  const extra: Server[] = [];
  const closingTimeouts: Array<{ closing(): void }> = [];

  return {
    route: realtimeRoute(tokens),
    committed: feed.committed,
    sockets: () => hub.size(),
    install(app) {
      sockets.attach(app.server, true);
      // A refused ingest request (400/409) reaches the sockets of the sessions it named as MLError.
      app.addHook('onError', async (request, _reply, error) => {
        if (request.tenant && INGEST_ROUTE.test(request.routeOptions.url ?? '')) {
          feed.refused(request.tenant, request.body, error);
        }
      });
      app.addHook('preClose', async () => {
        for (const t of closingTimeouts) t.closing();
        await sockets.close();
        await Promise.all(extra.map((s) => new Promise((resolve) => s.close(resolve))));
      });
    },
    async listen(host, port, serviceLimits) {
      // The API port's timeouts and error bodies: a stalled request is 408 in our JSON, and stays
      // so while the service closes, where it held a SIGTERM up (found by probing).
      const timeouts = listenerTimeouts(serviceLimits);
      const server = createServer(
        {
          headersTimeout: timeouts.headersTimeout,
          requestTimeout: timeouts.requestTimeout,
          connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
        },
        (_req, res) => notHere(res),
      );
      server.keepAliveTimeout = timeouts.keepAliveTimeout;
      server.on('clientError', clientErrorHandler);
      closingTimeouts.push(
        keepTimeoutsWhileClosing(server, serviceLimits, timeouts.connectionsCheckingInterval),
      );
      guardConnections(server, serviceLimits);
      sockets.attach(server, false);
      await new Promise<void>((resolve, reject) => {
        // Marked, so `cas serve` names --ws-port (not --port) when the port is taken.
        server.once('error', (error) => reject(Object.assign(error, { wsPort: true })));
        server.listen(port, host, () => resolve());
      });
      extra.push(server);
      const bound = (server.address() as AddressInfo).port;
      return `ws://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    },
  };
}
