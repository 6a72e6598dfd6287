import type { StoredEvent } from '../../shared/users-api.js';
import type { Scope } from '../identity/identity.js';
import { toStoredEvent } from '../read/stored-event.js';
import type { Queryable } from '../store/database.js';
import type { StoreValue } from '../store/statements.js';

/**
 * Stored events in the public envelope, `user_id` being the person's current primary id (decisions
 * §4) and `user_traits` their current traits. `where` is fixed SQL over alias `e` written in this
 * service; values travel in `params` ($2 onwards; $1 is the project).
 */
export async function eventDocs(
  q: Queryable,
  scope: Scope,
  where: string,
  params: StoreValue[],
  page: { order?: string; limit?: number; offset?: number } = {},
): Promise<StoredEvent[]> {
  const rows = await q.all<{
    event_id: string;
    event: string;
    session_id: string | null;
    conversation_id: string | null;
    origin_event_id: string | null;
    ts: bigint | number;
    properties: string | null;
    primary_id: string | null;
    traits: string | null;
  }>(
    `SELECT e.event_id, e.event, e.session_id, e.conversation_id, e.origin_event_id, epoch_ms(e.ts) AS ts,
            e.properties::VARCHAR AS properties, p.primary_id, p.traits::VARCHAR AS traits
       FROM events e
       LEFT JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
       LEFT JOIN users p ON p.project_id = e.project_id AND p.user_id = u.canonical_user_id
      WHERE e.project_id = $1 AND (${where})
      ORDER BY ${page.order ?? 'e.ts, e.rowid'}
      ${page.limit === undefined ? '' : `LIMIT ${Math.trunc(page.limit)}`}
      ${page.offset === undefined ? '' : `OFFSET ${Math.trunc(page.offset)}`}`,
    [scope.projectId, ...params],
  );
  return rows.map((r) => {
    const e = toStoredEvent(scope, {
      eventId: r.event_id,
      event: r.event,
      sessionId: r.session_id,
      conversationId: r.conversation_id,
      originEventId: r.origin_event_id,
      ts: Number(r.ts),
      properties: r.properties === null ? null : (JSON.parse(r.properties) as StoredEvent['properties']),
      primaryId: r.primary_id,
      traits: r.traits === null ? null : (JSON.parse(r.traits) as StoredEvent['user_traits']),
    });
    return { ...e, properties: e.properties ?? {}, user_traits: e.user_traits ?? {} };
  });
}
