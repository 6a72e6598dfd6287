import type { WireType } from '../../shared/event-names.js';
import type { RouteEvent } from '../../shared/events.js';
import type { PropertyValue } from '../../shared/primitives.js';
import { newUlid } from '../identity/ids.js';
import type { IdentityMaps } from '../identity/model.js';

/** One row of the events table as the planner produces it; user_id is resolved to canonical at write. */
export interface EventRow {
  eventId: string;
  event: string;
  type: WireType;
  /** Epoch ms. */
  ts: number;
  userId: string | null;
  sessionId: string | null;
  conversationId: string | null;
  properties: Record<string, PropertyValue> | null;
  originEventId: string | null;
  /**
   * Index of the request's event this row belongs to (its own row or one generated for it); negative
   * for a stored event's row that a replay made again.
   */
  owner: number;
  /** The device the caller's event named (events.device_id), echoed in per-event route answers. */
  deviceId?: string;
}

/**
 * An event id for an event sent without one: `e_` + a 26-character ULID (48-bit receive time + 80
 * random bits), so ids sort by arrival and never collide with each other. Caller ids are free-form
 * strings, so a caller could still send this very id; that would only make it a duplicate of this event.
 */
export function newEventId(now: number): string {
  return `e_${newUlid(now)}`;
}

/**
 * Ids of generated events derive from the event that caused them (also their origin_event_id), so a
 * person reading live events can tell what produced what, and a re-run produces the same ids.
 */
export function generatedId(originId: string, what: string): string {
  return `${originId}#${what}`;
}

/**
 * A per-event route's answer (decisions §4): the request's own event as stored plus what it
 * generated, in time order, each with the user's current primary caller id (as live events show it).
 * A new session's `Session Started` comes first: same time as its cause, stored before it.
 */
export function routeAnswer(rows: readonly EventRow[], maps: IdentityMaps): RouteEvent[] {
  // Rows a replay made again for stored events (owner < 0) are other requests' (replan.ts).
  const own = rows.filter((row) => row.owner >= 0);
  const ordered = own.map((row, i) => ({ row, i })).sort((a, b) => a.row.ts - b.row.ts || a.i - b.i);
  return ordered.map(({ row }) =>
    routeEvent(row, row.userId === null ? undefined : maps.user(maps.canonical(row.userId)).primaryId),
  );
}

/** One event as a per-event route answers it, `primaryId` the person's current primary caller id. */
export function routeEvent(
  row: Omit<EventRow, 'owner' | 'userId'>,
  primaryId: string | undefined,
): RouteEvent {
  return {
    type: row.type,
    event: row.event,
    ...(row.sessionId === null ? {} : { session_id: row.sessionId }),
    ...(row.conversationId === null ? {} : { conversation_id: row.conversationId }),
    timestamp: new Date(row.ts).toISOString(),
    event_id: row.eventId,
    ...(primaryId === undefined ? {} : { user_id: primaryId }),
    ...(row.deviceId === undefined ? {} : { device_id: row.deviceId }),
    ...(row.properties === null ? {} : { properties: row.properties }),
    ...(row.originEventId === null ? {} : { origin_event_id: row.originEventId }),
  };
}
