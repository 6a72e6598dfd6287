import type { LiveFrame } from '../shared/live-events.js';
import type { LibConnection } from './connection.js';
import { serviceError } from './errors.js';
import type { LiveEvent, ServiceError } from './types.js';

export interface LiveHandlers {
  onEvent: (event: LiveEvent) => void;
  onError: (error: ServiceError) => void;
}

/** A session's socket as its Session drives it. */
export interface LiveListener {
  /**
   * Resolves once the socket is open (or could not be, or a few seconds passed): events sent before
   * would not be seen. The process stays alive meanwhile, as it does for a send.
   */
  ready(): Promise<void>;
  /** Events about to be sent: the session's own, which a backfill may deliver. */
  sending(eventIds: readonly string[]): void;
  /** Events the service acknowledged: flush() waits until the socket has delivered them. */
  acknowledged(eventIds: readonly string[]): void;
  /** A 400/409 the HTTP client got: the service reports the same refusal as an MLError frame. */
  refusedRequest(status: number, message: string): void;
  /** Waits (a little) for the acknowledged events' frames, then closes the socket. */
  close(): Promise<void>;
}

/** How long a session waits for its socket before sending anyway, and flush() for the last frames. */
const OPEN_WAIT_MS = 5_000;
const DRAIN_WAIT_MS = 5_000;
/** An MLError frame is held this long for the HTTP answer it duplicates to arrive. */
const MATCH_WAIT_MS = 2_000;
const STORED_PAGE = 10_000;

/**
 * `onEvent` (library.md): a socket scoped to the session, opened through the client of
 * `src/client/live-socket.ts` (loaded only when a session asks for events, so an app without
 * `onEvent` never loads `ws`). Each event is delivered once, in commit order. After a reconnect
 * (a restart of the service), or a first open later than the session's first batch, the session's
 * stored events are read to fill the gap: those this session sent and what they generated, not what
 * an earlier process stored under the same session id. `MLError` frames become errors, except those
 * repeating a refusal the session already got over HTTP.
 */
export function openLiveEvents(
  service: {
    connect: () => Promise<LibConnection>;
    /** The connection to use after a network failure over `used`, if it may have changed. */
    refresh: (used: LibConnection) => Promise<LibConnection | undefined>;
  },
  sessionId: string,
  handlers: LiveHandlers,
  log: ((line: string) => void) | undefined,
): LiveListener {
  const delivered = new Set<string>();
  /** Ids of the events this session sent. */
  const ours = new Set<string>();
  const awaited = new Set<string>();
  const refusals = new Map<string, number>();
  const heldErrors: Array<{ key: string; error: ServiceError; timer: NodeJS.Timeout }> = [];
  let drainWaiter: (() => void) | undefined;
  let handle: { close(): void; done: Promise<unknown> } | undefined;
  let opens = 0;
  let stopped = false;
  /** Why the socket last had to reconnect (or could not open), for the report of undelivered events. */
  let lastProblem: string | undefined;
  let failureReported = false;
  let backfilling: LiveFrame[] | undefined;
  let markReady: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  /** The session went on sending before the socket opened: its first open must fill the gap too. */
  let late = false;
  const readyTimer = setTimeout(() => {
    late = true;
    markReady();
  }, OPEN_WAIT_MS);
  readyTimer.unref();

  const deliver = (frame: LiveFrame): void => {
    if (delivered.has(frame.event_id)) return;
    delivered.add(frame.event_id);
    awaited.delete(frame.event_id);
    if (awaited.size === 0) drainWaiter?.();
    handlers.onEvent(frame);
  };

  const mlError = (frame: LiveFrame): void => {
    const message =
      typeof frame.properties?.error_message === 'string' ? frame.properties.error_message : 'Unknown error';
    const status = typeof frame.properties?.status === 'number' ? frame.properties.status : -1;
    const key = `${status} ${message}`;
    if (take(refusals, key)) return;
    const error = serviceError(status, message);
    const held = { key, error, timer: setTimeout(() => release(held), MATCH_WAIT_MS) };
    heldErrors.push(held);
  };
  const release = (held: (typeof heldErrors)[number]): void => {
    const i = heldErrors.indexOf(held);
    if (i < 0) return;
    heldErrors.splice(i, 1);
    clearTimeout(held.timer);
    handlers.onError(held.error);
  };

  const onFrame = (frame: LiveFrame): void => {
    if (frame.event === 'MLError') mlError(frame);
    else if (backfilling) backfilling.push(frame);
    else deliver(frame);
  };

  /** After a reconnect (or a late first open): the session's stored events not yet delivered, then what arrived meanwhile. */
  const backfill = async (connection: LibConnection): Promise<void> => {
    backfilling = [];
    try {
      const { liveEvents } = await import('../client/routes.js');
      const rows = await liveEvents(connection.http, {
        start: '1970-01-01T00:00:00Z',
        end: '9999-01-01T00:00:00Z',
        limit: STORED_PAGE,
        session_id: sessionId,
      });
      // Newest first from the route: reversed, commit order. Only this session's own and what they
      // generated: an earlier process's events of the same session id were never this one's to see.
      for (const row of rows.reverse() as LiveFrame[]) {
        if (ours.has(row.event_id) || (row.origin_event_id !== undefined && ours.has(row.origin_event_id)))
          deliver(row);
      }
    } catch (error) {
      log?.(`live events of ${sessionId}: the gap after a reconnect could not be read: ${message(error)}`);
    } finally {
      const waiting = backfilling ?? [];
      backfilling = undefined;
      for (const frame of waiting) deliver(frame);
    }
  };

  /** The gap being read after the latest open (see `backfill`). */
  let filling: Promise<void> = Promise.resolve();
  const start = async (): Promise<void> => {
    let connection = await service.connect();
    const { openLiveSocket } = await import('../client/live-socket.js');
    if (stopped) return;
    const socket = openLiveSocket({
      client: connection.http,
      sessionId,
      onFrame,
      // An app that ends without close() still exits (library.md's beforeExit flush), as without onEvent.
      unref: true,
      onOpen: () => {
        opens++;
        if (opens === 1) markReady();
        if (opens > 1 || late) filling = backfill(connection);
      },
      // A `cas serve` found through server.json that restarted on another port: the socket follows
      // it, as sending does (it kept asking the old port until close: found by probing).
      refresh: async () => {
        const next = await service.refresh(connection);
        if (next !== undefined) connection = next;
        return next?.http;
      },
      onRetry: (info) => {
        lastProblem = info.error.message;
        log?.(`live events of ${sessionId}: reconnecting in ${info.delayMs} ms: ${info.error.message}`);
      },
    });
    handle = socket;
    const end = await socket.done;
    // A socket that reopens after its session ended closes at once (1000): the gap it was opened
    // to fill is still being read, and is what the app is owed.
    await filling;
    if (end.reason === 'failed') {
      failureReported = true;
      handlers.onError(
        serviceError(end.error.status, `live events of session ${sessionId}: ${end.error.message}`),
      );
    }
  };
  const running = start()
    .catch((error: unknown) => {
      failureReported = true;
      handlers.onError(serviceError(-1, `live events of session ${sessionId}: ${message(error)}`));
    })
    .finally(() => {
      clearTimeout(readyTimer);
      markReady();
      drainWaiter?.();
    });

  return {
    async ready() {
      // The socket's timers do not keep the process alive (an idle session must not), so a send
      // waiting for it did not either: an app awaiting flush() exited 13, its events unsent, when
      // the socket was refused at every attempt (found by probing).
      const hold = setInterval(() => undefined, OPEN_WAIT_MS);
      try {
        await opened;
      } finally {
        clearInterval(hold);
      }
    },
    sending(eventIds) {
      for (const id of eventIds) ours.add(id);
    },
    acknowledged(eventIds) {
      for (const id of eventIds) if (!delivered.has(id)) awaited.add(id);
    },
    refusedRequest(status, text) {
      const key = `${status} ${text}`;
      const held = heldErrors.find((h) => h.key === key);
      if (held) {
        heldErrors.splice(heldErrors.indexOf(held), 1);
        clearTimeout(held.timer);
      } else refusals.set(key, (refusals.get(key) ?? 0) + 1);
    },
    async close() {
      stopped = true;
      if (awaited.size > 0 && handle) {
        // A timer that keeps the process alive: close() and flush() are awaited, and the socket's
        // own timers would let an app exit (13) in the middle of the wait.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => {
            drainWaiter = resolve;
          }),
          running,
          new Promise((resolve) => {
            timer = setTimeout(resolve, DRAIN_WAIT_MS);
          }),
        ]);
        clearTimeout(timer);
      }
      handle?.close();
      await running;
      // Acknowledged events that never reached onEvent (a socket refused at every attempt, e.g. 503
      // past the service's connections per address) were lost to the app without a word.
      if (awaited.size > 0 && !failureReported) {
        const why = lastProblem === undefined ? '' : ` (the socket: ${lastProblem})`;
        handlers.onError(
          serviceError(
            -1,
            // Counted among the app's own: the starts and summaries the service made of them are not
            // (the count read as the whole, found by probing).
            `live events of session ${sessionId}: ${awaited.size} of its own stored event(s), and those the service generated from them, did not reach onEvent before close${why}`,
          ),
        );
      }
      // Every HTTP answer is in by now: an MLError frame still unmatched is news to the app.
      for (const held of [...heldErrors]) release(held);
    },
  };
}

function take(counts: Map<string, number>, key: string): boolean {
  const n = counts.get(key) ?? 0;
  if (n === 0) return false;
  if (n === 1) counts.delete(key);
  else counts.set(key, n - 1);
  return true;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
