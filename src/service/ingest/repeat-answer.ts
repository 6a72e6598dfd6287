import type { WireType } from '../../shared/event-names.js';
import type { RouteEvent } from '../../shared/events.js';
import type { Scope } from '../identity/identity.js';
import { leaseRead } from '../read/lease.js';
import type { Database } from '../store/database.js';
import { rows, text } from '../store/statements.js';
import { type EventRow, routeEvent } from './rows.js';

interface Row extends Record<string, unknown> {
  type: WireType;
  event: string;
  session_id: string | null;
  conversation_id: string | null;
  ts: number;
  event_id: string;
  primary_id: string | null;
  device_id: string | null;
  properties: string | null;
  origin_event_id: string | null;
}

/**
 * A per-event route's answer to a repeat (an `event_id` stored before): decisions §4 answers "with the
 * request's own event as stored … plus the events it generated", and a repeat is acknowledged, so the
 * row stored under that id and the rows it caused come back as routeAnswer shapes a new answer (in
 * time order, each the person's current primary id): the answer the first request got, which a
 * client retrying after losing it never saw. An answer of `[]` left it unable to tell a stored event
 * from a lost one; its own row alone dropped the Summary of an end_conversation, say (found by fuzzing).
 */
export async function repeatAnswer(db: Database, tenant: Scope, eventId: string): Promise<RouteEvent[]> {
  const found = await leaseRead(db, tenant, (q) =>
    rows<Row>(
      q,
      `SELECT e.type, e.event, e.session_id, e.conversation_id, epoch_ms(e.ts)::DOUBLE AS ts, e.event_id,
              c.primary_id, e.device_id, e.properties::VARCHAR AS properties, e.origin_event_id
         FROM events e
         LEFT JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
         LEFT JOIN users c ON c.project_id = e.project_id AND c.user_id = u.canonical_user_id
        WHERE e.project_id = $1 AND (e.event_id = $2 OR e.origin_event_id = $2)
        ORDER BY e.ts, e.rowid
        LIMIT 1000`,
      [text(tenant.projectId), text(eventId)],
    ),
  );
  return found.map((r) =>
    routeEvent(
      {
        eventId: r.event_id,
        event: r.event,
        type: r.type,
        ts: r.ts,
        sessionId: r.session_id,
        conversationId: r.conversation_id,
        properties: r.properties === null ? null : (JSON.parse(r.properties) as EventRow['properties']),
        originEventId: r.origin_event_id,
        ...(r.device_id === null ? {} : { deviceId: r.device_id }),
      },
      r.primary_id ?? undefined,
    ),
  );
}
