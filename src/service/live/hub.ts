import type { LiveScope } from './token.js';

/** One frame, serialized once for every socket that gets it. */
export interface OutFrame {
  /** '' for a refusal that named no session: project-wide sockets only. */
  sessionId: string;
  text: string;
  bytes: number;
  /** A `Session Ended`: its session's sockets are closed once the batch is sent. */
  endsSession: boolean;
}

/** A socket as the hub sees it (socket-route.ts wraps a real one). */
export interface Subscriber {
  readonly scope: LiveScope;
  /** The frames of one commit or refusal that this subscriber may see, in order. */
  deliver(frames: readonly OutFrame[]): void;
  /** Closes the socket (the service is stopping). */
  close(code: number, reason: string): void;
}

/** Which rows of a project anyone listens to: all of them, some sessions', or none. */
export type Interest = 'all' | ReadonlySet<string> | undefined;

const key = (scope: LiveScope) => `${scope.orgId}\n${scope.projectId}`;

/**
 * The live sockets of each project. Frames go only to sockets of the project (and organization) they
 * were made for, and a session-scoped socket sees only its session's frames: tenant isolation here is
 * a map lookup, not a filter that could be forgotten.
 */
export class LiveHub {
  private readonly projects = new Map<string, Set<Subscriber>>();
  private count = 0;

  add(subscriber: Subscriber): () => void {
    const k = key(subscriber.scope);
    let set = this.projects.get(k);
    if (!set) {
      set = new Set();
      this.projects.set(k, set);
    }
    set.add(subscriber);
    this.count++;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.count--;
      set.delete(subscriber);
      if (set.size === 0 && this.projects.get(k) === set) this.projects.delete(k);
    };
  }

  /** Open sockets, in all or of one organization. */
  size(orgId?: string): number {
    if (orgId === undefined) return this.count;
    let n = 0;
    for (const set of this.projects.values()) {
      for (const s of set) if (s.scope.orgId === orgId) n++;
    }
    return n;
  }

  /** What the feed must build for a project: nothing at all when no socket listens (the usual case). */
  interest(scope: LiveScope): Interest {
    const set = this.projects.get(key(scope));
    if (!set) return undefined;
    const sessions = new Set<string>();
    for (const s of set) {
      if (s.scope.sessionId === undefined) return 'all';
      sessions.add(s.scope.sessionId);
    }
    return sessions;
  }

  publish(scope: LiveScope, frames: readonly OutFrame[]): void {
    if (frames.length === 0) return;
    const set = this.projects.get(key(scope));
    if (!set) return;
    // A copy: delivering may close a socket, which removes it from the set.
    for (const s of [...set]) {
      const session = s.scope.sessionId;
      const mine = session === undefined ? frames : frames.filter((f) => f.sessionId === session);
      if (mine.length > 0) s.deliver(mine);
    }
  }

  closeAll(code: number, reason: string): void {
    this.closeWhere(() => true, code, reason);
  }

  closeWhere(which: (scope: LiveScope) => boolean, code: number, reason: string): void {
    for (const set of [...this.projects.values()]) {
      for (const s of [...set]) if (which(s.scope)) s.close(code, reason);
    }
  }
}
