import type { SessionState } from './state.js';

/** Where a derived session lies in time: enough to tell whether new events of its key may join it. */
export interface Span {
  id: string;
  start: number;
  last: number;
}

/**
 * The stored derived sessions of recently used keys (the import extension's session_key), so the
 * sessions a request's events may join are found in memory, not by a query per request. A key that
 * is here has all its stored sessions here; a key that is not is looked up once (if the project's
 * filter says it may have sessions) and then kept, most recently used last, up to `limit` keys.
 */
export class DerivedIndex {
  private readonly byKey = new Map<string, Map<string, Span>>();

  constructor(private readonly limit = 50_000) {}

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** A key's complete list of stored spans (loaded from the database, or known to be empty). */
  load(key: string, spans: readonly Span[]): void {
    this.byKey.delete(key);
    this.byKey.set(key, new Map(spans.map((s) => [s.id, s])));
    if (this.byKey.size > this.limit) {
      const oldest = this.byKey.keys().next().value;
      if (oldest !== undefined) this.byKey.delete(oldest);
    }
  }

  /** Spans of the key that events between `from` and `to` may join (none when the key is not here). */
  near(key: string, from: number, to: number): Span[] {
    const spans = this.byKey.get(key);
    if (!spans) return [];
    this.byKey.delete(key);
    this.byKey.set(key, spans);
    return [...spans.values()].filter((s) => s.start <= to && s.last >= from);
  }

  /** A derived session as written (after a commit); kept only for keys that are here. */
  record(s: SessionState): void {
    if (s.derivedKey === null) return;
    this.byKey.get(s.derivedKey)?.set(s.id, { id: s.id, start: s.startedAt, last: s.lastEventAt });
  }

  /** A session deleted (merged into another, or replayed under its own name and recorded again). */
  remove(key: string | null, id: string): void {
    if (key !== null) this.byKey.get(key)?.delete(id);
  }

  /** After a failure: every key is looked up again when next needed. */
  clear(): void {
    this.byKey.clear();
  }
}
