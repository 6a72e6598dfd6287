import type { StoredEvent } from '../../shared/events.js';
import type { Scope } from '../identity/identity.js';

/** A stored row with its person resolved: what `live-events/events` and the live socket both send. */
export interface StoredEventFields {
  eventId: string;
  event: string;
  sessionId: string | null;
  conversationId: string | null;
  originEventId: string | null;
  /** Epoch ms. */
  ts: number;
  properties: StoredEvent['properties'] | null;
  /** The person's current primary caller id (after merges and aliases); null for no user. */
  primaryId: string | null;
  traits: StoredEvent['user_traits'] | null;
}

/** The public description's envelope of one event (decisions §4); absent values are left out. */
export function toStoredEvent(scope: Scope, f: StoredEventFields): StoredEvent {
  return {
    organization_id: scope.orgId,
    app_id: scope.projectId,
    session_id: f.sessionId ?? '',
    user_id: f.primaryId ?? '',
    event_id: f.eventId,
    ...(f.conversationId === null ? {} : { conversation_id: f.conversationId }),
    ...(f.originEventId === null ? {} : { origin_event_id: f.originEventId }),
    timestamp: new Date(f.ts).toISOString(),
    event: f.event,
    ...(f.properties === null || f.properties === undefined ? {} : { properties: f.properties }),
    ...(f.traits === null || f.traits === undefined ? {} : { user_traits: f.traits }),
  };
}
