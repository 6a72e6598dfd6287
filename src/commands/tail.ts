import { createHash } from 'node:crypto';
import { z } from 'zod';
import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { type LiveSocketEnd, LiveSocketError, openLiveSocket } from '../client/live-socket.js';
import { getUser, liveEvents } from '../client/routes.js';
import { type LiveFrame, liveFrameSchema, SESSION_ENDED_EVENT } from '../shared/live-events.js';
import { STORED_TIME_RANGE } from '../shared/primitives.js';
import { UsageError } from './errors.js';
import { RecentIds } from './recent-ids.js';

export interface TailOptions {
  session?: string | undefined;
  user?: string | undefined;
  /** Event names to keep; empty keeps all. */
  events?: readonly string[] | undefined;
  /** Where the history starts, epoch ms (`--since`, read against one clock reading). */
  sinceAt: number;
  follow: boolean;
}

export interface TailDeps {
  client: Client;
  /** The client of the service there is now, when the one used went away (LiveSocketOptions.refresh). */
  refresh?: (() => Promise<Client | undefined>) | undefined;
  signal?: AbortSignal | undefined;
  now?: () => number;
  /** A line for stderr (reconnecting, gave up). */
  notice?: (line: string) => void;
  /** `--retries`: socket attempts before the first one opens, then the command ends (exit 5/7). */
  retries?: number | undefined;
  /** `--timeout`: the time a socket's upgrade may take. */
  timeoutMs?: number | undefined;
}

/** Newest events of the history shown (live-events/events answers newest first). */
const HISTORY_LIMIT = 1_000;
/** Event ids remembered to drop a frame printed already (history/socket seam, reconnects). */
const SEEN_IDS = 10_000;
/** Frames waiting for the reader before the socket is paused (the service then holds the rest). */
const HIGH_WATER = 1_000;
/** After a reconnect, history is read again from this long before the last event seen. */
const OVERLAP_MS = 5_000;
/** What a reconnect's catch-up reads at most, page by page: a longer gap is said, not held in memory. */
const CATCH_UP_LIMIT = 100_000;
/** The route's largest page (decisions §2): a catch-up stuck on one millisecond's events asks for it. */
const PAGE_MAX = 10_000;

const historySchema = z.array(liveFrameSchema);

/**
 * What a row held: a replay of its session (an import's later history) stores some rows again
 * under their ids, changed (a summary with the new turns, an end moved), and the service sends
 * them again; only the same row seen twice (the history and the socket overlap) is left out.
 */
function version(f: LiveFrame): string {
  return createHash('sha256')
    .update(`${f.event}\u0000${f.timestamp}\u0000${JSON.stringify(f.properties ?? null)}`)
    .digest('base64url');
}

type Item = { frame: LiveFrame } | { opened: true } | { retrying: true } | { end: LiveSocketEnd };

/**
 * Every id of the person `--user` names: frames carry the person's primary id, so after an alias
 * (u01 → alice@example.com) the id given matched nothing (found by probing). A user the service does
 * not know (yet) is matched by the id given.
 */
async function idsOf(client: Client, user: string, signal: AbortSignal | undefined): Promise<Set<string>> {
  try {
    const found = await getUser(client, user, { limit: 1 }, signal ? { signal } : undefined);
    return new Set([user, found.id, found.user_id, ...found.aliases]);
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) return new Set([user]);
    throw error;
  }
}

/** How many of a session's newest events are searched for its end, when it ended before --since. */
const ENDED_LOOKBACK = 20;

/**
 * `cas tail`: the recent events of the project (or of a session, a user, some names) from
 * `live-events/events`, then each new one from the live socket as it commits. The socket is opened
 * before the history is read, and after every reconnect the history is read again from just before
 * the last event seen, so nothing committed meanwhile is missed and, by event id, nothing is
 * yielded twice. With a session it ends after that session's `Session Ended`.
 */
export async function* runTail(options: TailOptions, deps: TailDeps): AsyncGenerator<LiveFrame> {
  const now = deps.now ?? Date.now;
  // The ids of events dated from where a reconnect reads the history again (`from`, below) are kept.
  const seen = new RecentIds(SEEN_IDS, () => from);
  // The socket may move to the service there is now (deps.refresh); the history follows it.
  let client = deps.client;
  const names = new Set(options.events ?? []);
  let person = options.user === undefined ? undefined : await idsOf(deps.client, options.user, deps.signal);
  // Ids of frames the person's ids did not hold when last asked: an alias made while tail runs
  // gives the person a primary id that frames then carry, so each new one asks again, once.
  const asked = new RecentIds(SEEN_IDS);
  const followPerson = async (frames: readonly LiveFrame[]): Promise<void> => {
    if (options.user === undefined || person === undefined) return;
    const current = person;
    const unknown = frames.flatMap((f) =>
      f.user_id !== null && !current.has(f.user_id) && !asked.has(f.user_id) ? [f.user_id] : [],
    );
    if (unknown.length === 0) return;
    try {
      person = await idsOf(client, options.user, deps.signal);
    } catch (error) {
      // The service went away meanwhile: the socket reconnects, and these ids are asked about then.
      if (error instanceof HttpError) throw error;
      return;
    }
    for (const id of unknown) asked.add(id);
  };
  const keep = (f: LiveFrame) =>
    (names.size === 0 || names.has(f.event)) &&
    (person === undefined || (f.user_id !== null && person.has(f.user_id)));
  const ends = (f: LiveFrame) =>
    options.session !== undefined && f.session_id === options.session && f.event === SESSION_ENDED_EVENT;
  let from = options.sinceAt;

  // Events may carry times ahead of this clock; a day covers any sane skew.
  const ahead = () => now() + 86_400_000;
  /** Newest first, as the route answers: the newest `limit` events of [start, end). */
  const page = (start: number, end: number, limit: number): Promise<LiveFrame[]> =>
    liveEvents(
      client,
      {
        start: new Date(start).toISOString(),
        end: new Date(end).toISOString(),
        limit,
        ...(options.session === undefined ? {} : { session_id: options.session }),
      },
      { schema: historySchema, ...(deps.signal ? { signal: deps.signal } : {}) },
    );
  /** The newest `limit` events since `start`, oldest first. */
  const history = async (start = from, limit = HISTORY_LIMIT): Promise<LiveFrame[]> =>
    (await page(start, ahead(), limit)).reverse();
  /**
   * Everything since `from` after a reconnect, however much was missed: pages back in time, each
   * ending at the oldest event of the one before (that millisecond included: `end` is exclusive),
   * until one holds nothing new (a page cut short by the service's byte budget is not taken for the
   * last one). Oldest first.
   */
  const catchUp = async (): Promise<LiveFrame[]> => {
    const found: LiveFrame[] = [];
    const ids = new Set<string>();
    let end = ahead();
    let limit = HISTORY_LIMIT;
    for (;;) {
      const frames = await page(from, end, limit);
      const unseen = frames.filter((f) => !ids.has(f.event_id));
      // A full page and nothing new: the oldest millisecond holds more events than a page (an import
      // dated them alike), and paging by time cannot get past it; a larger page can.
      if (unseen.length === 0 && frames.length >= limit && limit < PAGE_MAX) {
        limit = PAGE_MAX;
        continue;
      }
      if (unseen.length === 0) {
        if (frames.length >= limit)
          deps.notice?.(
            `cas: live events: more than ${limit} events of ${frames[frames.length - 1]?.timestamp} were stored while disconnected; some are not shown`,
          );
        break;
      }
      for (const f of unseen) ids.add(f.event_id);
      found.push(...unseen);
      if (found.length >= CATCH_UP_LIMIT) {
        deps.notice?.(
          `cas: live events: more than ${CATCH_UP_LIMIT} events were stored while disconnected; the older ones are not shown`,
        );
        break;
      }
      const oldest = frames[frames.length - 1];
      if (oldest === undefined) break;
      end = Date.parse(oldest.timestamp) + 1;
    }
    return found.reverse();
  };
  /** What of `frames` is new and wanted; `done` once the session's end went by. */
  const fresh = (frames: readonly LiveFrame[]) => {
    const out: LiveFrame[] = [];
    for (const f of frames) {
      if (!seen.add(f.event_id, version(f), Date.parse(f.timestamp))) continue;
      // An event dated ahead of this clock is no sign of how far the history goes: after a restart
      // the catch-up began an hour ahead and left out what was stored meanwhile (found by probing).
      from = Math.max(from, Math.min(Date.parse(f.timestamp), now()) - OVERLAP_MS);
      if (keep(f)) out.push(f);
      if (ends(f)) return { out, done: true };
    }
    return { out, done: false };
  };

  if (!options.follow) {
    yield* fresh(await history()).out;
    return;
  }

  const queue: Item[] = [];
  let wake: (() => void) | undefined;
  const push = (item: Item) => {
    queue.push(item);
    if (queue.length > HIGH_WATER) socket.pause();
    wake?.();
  };
  const socket = openLiveSocket({
    client,
    refresh: deps.refresh
      ? async () => {
          const next = await deps.refresh?.();
          if (next) client = next;
          return next;
        }
      : undefined,
    sessionId: options.session,
    signal: deps.signal,
    onFrame: (frame) => push({ frame }),
    onOpen: () => push({ opened: true }),
    onRetry: ({ delayMs, error }) => {
      deps.notice?.(`cas: live events: ${error.message}; reconnecting in ${Math.ceil(delayMs / 100) / 10} s`);
      push({ retrying: true });
    },
    firstOpenAttempts: deps.retries,
    openTimeoutMs: deps.timeoutMs,
  });
  void socket.done.then((end) => push({ end }));
  try {
    // The history is shown once: when the first socket opens, or when one failed first (so a socket
    // that will not open does not hide it: found by probing). Every later open catches up from it.
    let shown = false;
    for (;;) {
      const item = queue.shift();
      if (!item) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      if (queue.length < HIGH_WATER / 10) socket.resume();
      if ('retrying' in item) {
        if (shown) continue;
        shown = true;
        const frames = await history();
        await followPerson(frames);
        const { out, done } = fresh(frames);
        yield* out;
        if (done) return;
      } else if ('opened' in item) {
        const first = !shown;
        shown = true;
        // The first open shows the newest of --since; a reconnect, everything missed meanwhile.
        const frames = first ? await history() : await catchUp();
        await followPerson(frames);
        const { out, done } = fresh(frames);
        yield* out;
        if (done) return;
        // A session that ended before --since has its end outside that history: no frame will come.
        if (first && options.session !== undefined && (await history(0, ENDED_LOOKBACK)).some(ends)) return;
      } else if ('frame' in item) {
        // Frames before the first history are kept in order behind it (they queue after `opened`).
        await followPerson([item.frame]);
        const { out, done } = fresh([item.frame]);
        yield* out;
        if (done) return;
      } else {
        if (item.end.reason !== 'failed') return;
        // No socket at all (a service without live events): the history still answers the question.
        if (!shown) yield* fresh(await history()).out;
        throw item.end.error;
      }
    }
  } finally {
    socket.close();
  }
}

export { LiveSocketError };

const SINCE_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const EARLIEST = Date.parse(`${STORED_TIME_RANGE.from}T00:00:00Z`);

/** `--since`: `30s`, `10m`, `2h`, `7d`, or an ISO 8601 time; ms back from `now`. */
export function parseSince(value: string, now: number): number {
  const match = /^(\d+)\s*([smhd])$/i.exec(value.trim());
  // No event is dated before 1900: further back reads the same history, where a date before the year
  // 1 failed as "this is a bug" (found by probing).
  if (match) return Math.min(Number(match[1]) * (SINCE_UNITS[match[2]!.toLowerCase()] ?? 0), now - EARLIEST);
  const at = Date.parse(value);
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(at)) return Math.max(0, now - at);
  throw new UsageError(
    `--since: expected a duration such as 30s, 10m, 2h or 7d, or an ISO time, got "${value}"`,
  );
}
