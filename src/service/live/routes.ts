import { z } from 'zod';
import { REALTIME_PATH, realtimeResponseSchema } from '../../shared/live-events.js';
import { route } from '../http/route.js';
import { optionalId } from '../read/query.js';
import { Tenants } from '../store/tenants.js';
import type { LiveTokens } from './token.js';

/**
 * GET /bc/v1/live-events/realtime: an `authorization_key` for the live-events socket, scoped to the
 * caller's project (and to `session_id` when given, as the Python SDK asks for a session's callbacks).
 */
export function realtimeRoute(tokens: LiveTokens) {
  return route({
    method: 'GET',
    url: REALTIME_PATH,
    tag: 'Live Events',
    summary:
      'A short-lived (10 min) key for the live-events websocket at / or /bc/v1/live-events/ws, scoped to the project or to one session',
    query: z.object({ session_id: optionalId }),
    response: realtimeResponseSchema,
    handler: async ({ tenant, query, request }) => ({
      authorization_key: tokens.issue({
        ...tenant,
        ...(query.session_id === undefined ? {} : { sessionId: query.session_id }),
        ...(request.keyHash === undefined ? {} : { keyId: Tenants.keyId(request.keyHash) }),
      }),
    }),
  });
}
