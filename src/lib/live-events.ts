import type { StoredEvent } from '../shared/events.js';
import type { LibConnection } from './connection.js';
import { serviceError } from './errors.js';
import type { LiveHandlers } from './session.js';

/** One frame of the live-events socket: an event of the session, sent by the app or generated. */
export type LiveEvent = StoredEvent;

export interface LiveListener {
  /** Waits a moment for the session's last frames when its end was sent, then closes the socket. */
  close(): Promise<void>;
}

/** Placeholder until src/client/live-socket.ts exists: reports that no socket could be opened. */
export function openLiveEvents(
  _connect: () => Promise<LibConnection>,
  sessionId: string,
  handlers: LiveHandlers,
  _log: ((line: string) => void) | undefined,
): LiveListener {
  handlers.onError(serviceError(-1, `live events of session ${sessionId}: not available`));
  return { close: async () => undefined };
}
