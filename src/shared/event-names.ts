/*
 * The names of stored rows and wire types, apart from the schemas (event-bodies.ts): readers of stored
 * rows (charts, live events, the client library) use them without the schemas.
 */

/** Names of stored rows (decisions §4): what charts, filters and live events see in `event`. */
export const EVENT_NAMES = {
  sessionStarted: 'Session Started',
  sessionEnded: 'Session Ended',
  conversationStarted: 'Conversation Started',
  conversationEnded: 'Conversation Ended',
  conversationTurn: 'Conversation Turn',
  conversationUsage: 'Conversation Usage',
  conversationFunction: 'Conversation Function',
  conversationSummary: 'Conversation Summary',
  intentInformed: 'Intent Informed',
  userIdentified: 'User Identified',
  userAliased: 'User Aliased',
} as const;
export type KnownEventName = (typeof EVENT_NAMES)[keyof typeof EVENT_NAMES];

export const WIRE_TYPES = ['start_session', 'end_session', 'identify', 'alias', 'track'] as const;
export type WireType = (typeof WIRE_TYPES)[number];

/** The event name of a live-events frame that reports a refused request, as both hosted SDKs check it. */
export const ML_ERROR_EVENT = 'MLError';

/**
 * Names a client may not `track` itself: the service records them from other wire types or generates
 * them, and a hand-made copy would double-count sessions or summaries in every chart.
 */
export const RESERVED_TRACK_NAMES: ReadonlyMap<string, string> = new Map([
  [EVENT_NAMES.sessionStarted, 'send type "start_session" instead'],
  [EVENT_NAMES.sessionEnded, 'send type "end_session" instead'],
  [EVENT_NAMES.userIdentified, 'send type "identify" instead'],
  [EVENT_NAMES.userAliased, 'send type "alias" instead'],
  [EVENT_NAMES.conversationSummary, 'the service records it when a conversation closes'],
  [EVENT_NAMES.intentInformed, 'the service records it when a conversation closes'],
  // Stored, it reached every live socket as a refusal: the SDKs and `onEvent` took it for one.
  [ML_ERROR_EVENT, 'live events report refused requests by that name'],
]);
