import { randomBytes } from 'node:crypto';
import type { StoredEvent } from '../../shared/events.js';
import { ML_ERROR_EVENT, SESSION_ENDED_EVENT } from '../../shared/live-events.js';
import { ServiceError } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import type { CommitListener } from '../ingest/commit-listener.js';
import type { EventRow } from '../ingest/rows.js';
import { toStoredEvent } from '../read/stored-event.js';
import type { Queryable } from '../store/database.js';
import { rows as query, text, texts } from '../store/statements.js';
import type { LiveHub, OutFrame } from './hub.js';

interface Person {
  primaryId: string;
  traits: StoredEvent['user_traits'];
}

/** Sessions one refusal names at most (a 2,000-event queue body could name 2,000). */
const MAX_REFUSED_SESSIONS = 100;

function outFrame(frame: StoredEvent): OutFrame {
  const text = JSON.stringify(frame);
  return {
    sessionId: frame.session_id,
    text,
    bytes: Buffer.byteLength(text),
    endsSession: frame.event === SESSION_ENDED_EVENT,
  };
}

/** The distinct `session_id`s a request body names (an event object or an array of them). */
function sessionsNamed(body: unknown): string[] {
  const items = Array.isArray(body) ? body : [body];
  const found = new Set<string>();
  for (const item of items) {
    if (found.size >= MAX_REFUSED_SESSIONS) break;
    if (typeof item !== 'object' || item === null) continue;
    const id = (item as Record<string, unknown>).session_id;
    if (typeof id === 'string' && id !== '') found.add(id);
  }
  return [...found];
}

/**
 * Turns what ingest committed or refused into frames for the hub. Nothing is built while no socket
 * listens to the project. Frames leave in commit order: a batch whose people the ingest cache no
 * longer holds waits for one lookup on the quick reader, and the batches after it wait their turn.
 */
export class LiveFeed {
  private chain: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly hub: LiveHub,
    private readonly reader: Queryable,
    private readonly log: (line: string) => void,
  ) {}

  readonly committed: CommitListener = (scope, groups, identity) => {
    try {
      const interest = this.hub.interest(scope);
      if (interest === undefined) return;
      const wanted = (row: EventRow) =>
        interest === 'all' || (row.sessionId !== null && interest.has(row.sessionId));
      const rows = groups.flatMap((g) => g.filter(wanted));
      if (rows.length === 0) return;
      const people = new Map<string, Person>();
      const missing = new Set<string>();
      for (const row of rows) {
        if (row.userId === null || people.has(row.userId) || missing.has(row.userId)) continue;
        try {
          const info = identity.user(identity.canonical(row.userId));
          people.set(row.userId, { primaryId: info.primaryId, traits: { ...info.traits } });
        } catch {
          // Forgotten by the cache (a user route touched it meanwhile): looked up below.
          missing.add(row.userId);
        }
      }
      const publish = () =>
        this.hub.publish(
          scope,
          rows.map((row) => outFrame(this.frame(scope, row, people))),
        );
      if (missing.size === 0 && this.waiting === 0) publish();
      else
        this.afterPending(async () => {
          if (missing.size > 0) await this.lookUp(scope, [...missing], people);
          publish();
        });
    } catch (error) {
      this.log(`live events: a commit was not published (${error instanceof Error ? error.message : error})`);
    }
  };

  /** A 400/409 of an ingest request: one `MLError` frame per session it named (or one for the project). */
  refused(scope: Scope, body: unknown, error: unknown): void {
    if (!(error instanceof ServiceError) || (error.status !== 400 && error.status !== 409)) return;
    if (this.hub.interest(scope) === undefined) return;
    const sessions = sessionsNamed(body);
    const timestamp = new Date().toISOString();
    const frames = (users: ReadonlyMap<string, string>) =>
      (sessions.length > 0 ? sessions : ['']).map((sessionId) =>
        outFrame({
          organization_id: scope.orgId,
          app_id: scope.projectId,
          session_id: sessionId,
          // The stored session's person, as its events name them: `cas tail --user` and an SDK's
          // filter by user saw no refusal of that user's session (found by probing). A session
          // nothing was stored of has nobody yet.
          user_id: users.get(sessionId) ?? '',
          event_id: `mlerror_${randomBytes(12).toString('base64url')}`,
          timestamp,
          event: ML_ERROR_EVENT,
          properties: { error_message: error.message, status: error.status, code: error.code },
        }),
      );
    if (sessions.length === 0) {
      if (this.waiting === 0) this.hub.publish(scope, frames(new Map()));
      else this.afterPending(async () => this.hub.publish(scope, frames(new Map())));
      return;
    }
    this.afterPending(async () => this.hub.publish(scope, frames(await this.sessionUsers(scope, sessions))));
  }

  /** The primary id of each stored session's person (one hop to the canonical user). */
  private async sessionUsers(scope: Scope, sessionIds: string[]): Promise<Map<string, string>> {
    const found = await query<{ session_id: string; primary_id: string }>(
      this.reader,
      `SELECT s.session_id, c.primary_id
         FROM sessions s
         JOIN users u ON u.project_id = s.project_id AND u.user_id = s.user_id
         JOIN users c ON c.project_id = u.project_id AND c.user_id = u.canonical_user_id
        WHERE s.project_id = $1 AND s.session_id IN (SELECT unnest($2))`,
      [text(scope.projectId), texts(sessionIds)],
    );
    return new Map(found.map((r) => [r.session_id, r.primary_id]));
  }

  private frame(scope: Scope, row: EventRow, people: ReadonlyMap<string, Person>): StoredEvent {
    const person = row.userId === null ? undefined : people.get(row.userId);
    return toStoredEvent(scope, {
      eventId: row.eventId,
      event: row.event,
      sessionId: row.sessionId,
      conversationId: row.conversationId,
      originEventId: row.originEventId,
      ts: row.ts,
      properties: row.properties,
      primaryId: person?.primaryId ?? null,
      traits: person?.traits ?? null,
    });
  }

  private afterPending(step: () => Promise<void>): void {
    this.waiting++;
    this.chain = this.chain
      .then(step)
      .catch((error: unknown) => {
        this.log(
          `live events: frames were not published (${error instanceof Error ? error.message : error})`,
        );
      })
      .finally(() => {
        this.waiting--;
      });
  }

  /** The person of each user id, as `live-events/events` resolves it (one hop to the canonical user). */
  private async lookUp(scope: Scope, userIds: string[], people: Map<string, Person>): Promise<void> {
    const found = await query<{ user_id: string; primary_id: string; traits: string | null }>(
      this.reader,
      `SELECT u.user_id, c.primary_id, c.traits::VARCHAR AS traits
         FROM users u JOIN users c ON c.project_id = u.project_id AND c.user_id = u.canonical_user_id
        WHERE u.project_id = $1 AND u.user_id IN (SELECT unnest($2))`,
      [text(scope.projectId), texts(userIds)],
    );
    for (const r of found) {
      people.set(r.user_id, {
        primaryId: r.primary_id,
        traits: r.traits === null ? undefined : (JSON.parse(r.traits) as StoredEvent['user_traits']),
      });
    }
  }
}
