import { z } from 'zod';
import { ML_ERROR_EVENT } from './event-names.js';
import { type StoredEvent, storedEventSchema } from './events.js';

export { ML_ERROR_EVENT };

/**
 * Live events over a websocket (issue 17, replacing decisions §7's first draft): the wire of
 * `GET /bc/v1/live-events/realtime` and of the socket's frames, shared by the service, `cas tail` and
 * the client library's `onEvent`.
 */

/** Where the socket is accepted besides `/` (the hosted SDKs derive `/` from the base URL). */
export const LIVE_SOCKET_PATH = '/bc/v1/live-events/ws';
export const REALTIME_PATH = '/bc/v1/live-events/realtime';

/** How long an `authorization_key` opens sockets; a socket once open outlives it. */
export const LIVE_TOKEN_TTL_MS = 10 * 60 * 1000;
/** The service pings every socket this often; a client that hears nothing for a few times this reconnects. */
export const LIVE_PING_MS = 30_000;

/** The generated event after which a session-scoped socket is closed normally (1000). */
export const SESSION_ENDED_EVENT = 'Session Ended';

/** Close codes the service uses: RFC 6455 §7.4.1. */
export const LIVE_CLOSE = {
  /** A session-scoped socket after its `Session Ended`. */
  normal: 1000,
  /** The service is stopping: reconnect once it is back. */
  goingAway: 1001,
  /** The reader fell behind its buffer: reconnect and catch up from `live-events/events`. */
  tooSlow: 1013,
  /** The API key the socket's token was issued to was revoked (policy violation). */
  revoked: 1008,
} as const;

// It goes into the socket's Authorization header: a character outside printable ASCII made the
// header throw (ERR_INVALID_CHAR), a stack trace out of `cas tail` (found by probing).
export const realtimeResponseSchema = z.object({
  authorization_key: z
    .string()
    .min(1)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces: it travels in a request header'),
});
export type RealtimeResponse = z.infer<typeof realtimeResponseSchema>;

/**
 * One text frame: a stored or generated event in the envelope of `live-events/events`, or an
 * `MLError` carrying `properties.error_message` (plus `status` and `code`).
 */
export const liveFrameSchema = storedEventSchema;
export type LiveFrame = StoredEvent;

export function isMlError(frame: LiveFrame): boolean {
  return frame.event === ML_ERROR_EVENT;
}

/** The message of an `MLError` frame, as the SDKs read it. */
export function mlErrorMessage(frame: LiveFrame): string {
  const message = frame.properties?.error_message;
  return typeof message === 'string' ? message : 'Unknown error';
}

/** What bounds the service's live sockets (ServiceOptions.live). */
export interface LiveLimits {
  /** Bytes of frames one socket may have waiting before it is closed (1013); one larger frame still goes to an idle reader. */
  bufferBytes: number;
  /** Bytes waiting for all sockets together (frames shared by sockets counted for each); beyond it the socket a frame is for is closed. */
  queuedBytes: number;
  /** Sockets one organization may hold open (429 beyond). */
  socketsPerOrganization: number;
}

/**
 * A commit of thousands of rows reaches a reader that keeps up (frames wait, shared, while 1 MiB is
 * on its way); one that stays behind by 16 MiB is closed. All waiting frames together stay within
 * 128 MiB, whatever the number of sockets.
 */
export const LIVE_LIMITS: LiveLimits = {
  bufferBytes: 16 * 1024 * 1024,
  queuedBytes: 128 * 1024 * 1024,
  socketsPerOrganization: 50,
};
