import type { IntentRule } from '../analysis/intent-rules.js';
import type { IdentityTouch } from '../identity/identity.js';
import { IdentityMaps } from '../identity/model.js';
import { type ConversationKey, conversationKey } from './conversation-key.js';
import { DerivedIndex } from './derived-index.js';
import type { EventIdFilter, KnownIds } from './known-ids.js';
import type { StoredRow } from './replay-rows.js';
import type { ConversationState, SessionState } from './state.js';

export interface KnownSets {
  /** Loaded only once a few requests went without it (EventIdFilter). */
  events: EventIdFilter;
  sessions: KnownIds;
  /** Conversation keys (conversation-key.ts): ids are scoped to their session. */
  conversations: KnownIds;
  ids: KnownIds;
  devices: KnownIds;
  /** Keys of derived sessions (the import extension's session_key) the project has. */
  derivedKeys: KnownIds;
}

/** A session or conversation looked up before prefetch loaded it: a bug upstream, never a "new" one. */
export class NotPrefetchedError extends Error {
  constructor(kind: string, id: string, session?: string) {
    const of = session === undefined ? '' : ` of session "${session}"`;
    super(`${kind} "${id}"${of} was looked up before it was loaded`);
    this.name = 'NotPrefetchedError';
  }
}

export interface Touched {
  sessions: ReadonlySet<string>;
  conversations: ReadonlySet<ConversationKey>;
}

/**
 * Open sessions all projects' caches keep together, those of the projects planned least recently
 * let go first, within each those written longest ago, with their conversations. Nothing else let
 * them go: a session never ended (a closed tab, a crashed client) stayed for the service's life with
 * every user text of its open conversations, ~1.8 KB for a session of one turn (found by a soak of
 * `cas serve`: +1.78 MB per 1,000 such requests, never flattening). One let go is loaded again, its
 * open conversations replayed, by the request that names it, as after a restart. 20,000 sessions of a
 * few turns are ~40-70 MB; a bound per project let 64 cached projects hold 32 times that.
 */
export const OPEN_SESSIONS = 20_000;

/**
 * One project's ingest state: open sessions and conversations, the identity rows seen so far, and the
 * hash filters of every id the database holds. The database stays the truth: whatever is not here is
 * loaded before a batch is planned, and whatever a failed batch touched is forgotten.
 */
export class ProjectCache {
  readonly sessions = new Map<string, SessionState>();
  /** Open conversations (and those this batch touched), by session-scoped key. */
  readonly conversations = new Map<ConversationKey, ConversationState>();
  /** Stored derived sessions of recently used keys, by key (the ones not in memory above). */
  readonly derived = new DerivedIndex();
  /** Stored caller rows of sessions the batch being planned reopens (replan.ts), until planned. */
  readonly history = new Map<string, StoredRow[]>();
  /** Ids a filter said "maybe" for and the database said no: new after all. */
  readonly absent = { sessions: new Set<string>(), conversations: new Set<ConversationKey>() };
  /**
   * Sessions a replay of the group being planned opens afresh (replan.ts): their stored rows are
   * deleted, so a conversation of theirs not in memory is new. The filters may still say "maybe" for
   * it: a refused or rolled-back plan that made it left its key behind, which no prefetch resolves
   * for a session only the replay names (a 500 on every later request of that key, found by fuzzing).
   * Read only while the group is planned (its sessions stay in memory until its commit settles).
   */
  readonly rebuilt = new Set<string>();
  readonly identity: IdentityMaps;

  constructor(
    readonly projectId: string,
    readonly known: KnownSets,
    /** Replaced when the project's user-defined intents change (Ingestor.intentsChanged). */
    public intents: readonly IntentRule[],
  ) {
    this.identity = new IdentityMaps({ ids: known.ids, devices: known.devices });
  }

  session(id: string): SessionState | undefined {
    const s = this.sessions.get(id);
    if (!s && this.needsSession(id)) throw new NotPrefetchedError('session', id);
    return s;
  }

  /** Conversation `id` of session `sessionId` (ids are scoped to their session). */
  conversation(sessionId: string, id: string): ConversationState | undefined {
    const key = conversationKey(sessionId, id);
    const c = this.conversations.get(key);
    if (!c && !this.rebuilt.has(sessionId) && this.needsConversation(key))
      throw new NotPrefetchedError('conversation', id, sessionId);
    return c;
  }

  needsSession(id: string): boolean {
    return !this.sessions.has(id) && !this.absent.sessions.has(id) && this.known.sessions.has(id);
  }

  needsConversation(key: ConversationKey): boolean {
    return (
      !this.conversations.has(key) && !this.absent.conversations.has(key) && this.known.conversations.has(key)
    );
  }

  /**
   * After a commit: the rows as written are stored now; closed sessions and conversations leave
   * memory. Closedness is read from what was written: the next group, planned meanwhile, may have
   * changed the live fields.
   */
  settle(touched: Touched): void {
    for (const id of touched.sessions) {
      const s = this.sessions.get(id);
      if (!s) continue;
      if (s.writing) [s.stored, s.writing] = [s.writing, null];
      this.derived.record(s);
      this.sessions.delete(id);
      // An open one goes last: the sessions written longest ago come first, to be let go.
      if (!(s.stored && s.stored.endedAt !== null && s.endedAt !== null)) this.sessions.set(id, s);
    }
    for (const id of touched.conversations) {
      const c = this.conversations.get(id);
      if (!c) continue;
      if (c.writing) [c.stored, c.writing] = [c.writing, null];
      if (c.stored && c.stored.endedAt !== null && c.endedAt !== null) this.conversations.delete(id);
    }
    this.absent.sessions.clear();
    this.absent.conversations.clear();
  }

  /**
   * Lets up to `count` open sessions go, those written longest ago first, with their conversations
   * (never one without its session: ending a session closes its open ones, looked up in memory);
   * returns how many went. Only once a group is written and before the next is planned: a planned
   * group's rows are written from this cache. `keep`: the sessions of the group just written, whose
   * commit is running.
   */
  letGoOpen(count: number, keep?: Touched): number {
    let dropped = 0;
    for (const [id, s] of this.sessions) {
      if (dropped >= count) break;
      if (keep?.sessions.has(id)) continue;
      this.sessions.delete(id);
      for (const c of s.conversations) this.conversations.delete(conversationKey(id, c));
      dropped++;
    }
    return dropped;
  }

  /**
   * After a failure (rollback): forget everything the batch may have changed, so the next batch
   * reloads it from the database. Identity maps are cleared whole: cheap to reload, and a failed
   * batch's merges would otherwise leave pointers the database never saw.
   */
  forget(touched: Touched): void {
    for (const id of touched.sessions) this.sessions.delete(id);
    for (const id of touched.conversations) this.conversations.delete(id);
    this.absent.sessions.clear();
    this.absent.conversations.clear();
    this.rebuilt.clear();
    this.history.clear();
    this.derived.clear();
    this.identity.ids.clear();
    this.identity.idUses.clear();
    this.identity.devices.clear();
    this.identity.deviceLinks.clear();
    this.identity.users.clear();
    this.identity.absent.ids.clear();
    this.identity.absent.devices.clear();
  }

  /** The user routes changed identity rows: reload those keys when next needed. */
  identityTouched(touch: IdentityTouch): void {
    for (const id of touch.ids) {
      this.known.ids.add(id);
      this.identity.ids.delete(id);
      this.identity.idUses.delete(id);
      this.identity.absent.ids.delete(id);
    }
    for (const device of touch.devices) {
      this.known.devices.add(device);
      this.identity.devices.delete(device);
      this.identity.deviceLinks.delete(device);
      this.identity.absent.devices.delete(device);
    }
    for (const user of touch.users) this.identity.users.delete(user);
  }
}
