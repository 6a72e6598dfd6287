import type { ConversationAnalyser } from '../analysis/analyser.js';
import type { IntentRule } from '../analysis/intent-rules.js';
import { type IdentityTouch, onIdentityTouched, type Scope } from '../identity/identity.js';
import type { Database, Queryable } from '../store/database.js';
import { isOutOfMemory } from '../store/read-pool.js';
import { loadProjectCache, warmEventFilter } from './cache-load.js';
import type { CommitListener } from './commit-listener.js';
import {
  type EventSource,
  type InFlight,
  type IngestOptions,
  type IngestResult,
  type Job,
  jobsOf,
  newsOf,
  type Prepared,
  planGroup,
  StalePlan,
  touchedBy,
  writePlanned,
} from './group.js';
import { IngestStats } from './ingest-stats.js';
import { OPEN_SESSIONS, type ProjectCache } from './project-cache.js';

export type { EventSource, IngestOptions, IngestResult } from './group.js';

/** Requests waiting together are committed together, up to this many events per transaction. */
export const GROUP_EVENTS = 16_000;

/**
 * Projects whose requests one transaction may hold. A group held one project's requests, so traffic
 * spread over many projects committed one request per transaction: 16 clients reached ~300 requests/s
 * on one project and ~100 over 40 (found by probing). Well under the caches' bound, since a group's
 * projects and the committing group's keep their caches while they are planned.
 */
const GROUP_PROJECTS = 16;

/**
 * Project caches kept, the least recently planned let go first: each holds its ids' filters (~0.1-0.5
 * MB for a small project, 16 MB at 1M events), and a service of many tenants grew by every project
 * written to since it started (found by probing: 131 → 374 MB over 496 projects). A project let go
 * loads its cache again at its next write, as after a restart (~0.1 s for a small one).
 */
export const CACHED_PROJECTS = 64;

/**
 * Caller ids and devices the caches keep together, checked between groups (IdentityMaps.letGo). They
 * stayed until their project was let go, ~0.8 KB a user and device (found by a soak of `cas serve`).
 * Above every working set measured: `npm run bench -- ingest` names ~80,000 ids (a device's anonymous
 * one included) and ~38,000 devices (a bound of 50,000, forgotten whole, cost it 28% of its
 * throughput in reloads).
 */
export const IDENTITIES_KEPT = 200_000;

/**
 * Past the bound, the caches are trimmed to half of it: a trim costs ~0.1 s of the thread at the bound
 * (by hand: 600,000 persons posted without a pause, ten trims), so it happens once per 100,000 new ids
 * and devices, not at every group.
 */
const TRIMMED_TO = 0.5;

/**
 * The one way events get into the database. Each request is judged whole before anything is written
 * (duplicates, then state: 400/409 with `[index].field` issues, nothing stored) and answered only after
 * the commit, so a 200 means durable. Requests that queue up together are committed together (group
 * commit, planning in group.ts), and the next group is planned while this one commits (`pump`). If a
 * group fails, it is undone and its requests run one by one, so a bad request never sinks the others.
 * The cache is changed in place; a failure forgets what it touched, to be reloaded from the database.
 */
export class Ingestor {
  readonly stats = new IngestStats();
  /** In the order of their last use, the least recent first. */
  private readonly caches = new Map<string, ProjectCache>();
  /**
   * The projects of the group committing while the next one is planned, and of the group being
   * planned: their caches are never let go.
   */
  private readonly holding = new Set<string>();
  private readonly queue: Job[] = [];
  private pumping = false;
  /**
   * Per project, bumped whenever a user route changes its identity rows, so a plan made before it is
   * not written. One count for every project made a user route in one project redo the pipelined plans
   * of all the others (a probe of 20 projects: 38 plans redone, concurrent sends slower than sequential).
   */
  private readonly identityEpochs = new Map<string, number>();
  /** While a group is planned, identity changes wait here: planning must see one identity state. */
  private preparing = false;
  private readonly pendingTouches: Array<[project: string, touch: IdentityTouch]> = [];
  private readonly unlisten: () => void;
  /** Live events (service/live/feed.ts): each committed group's rows, before its requests are answered. */
  onCommitted: CommitListener | undefined;

  constructor(
    private readonly db: Database,
    private readonly analyser: ConversationAnalyser,
    /** Operational lines: a failed COMMIT (a full disk, say) must be visible beyond its 500s. */
    private readonly log: (line: string) => void = () => undefined,
    private readonly maxCaches = CACHED_PROJECTS,
    /** Open sessions (OPEN_SESSIONS) and identity rows (IDENTITIES_KEPT) all projects' caches keep. */
    private readonly bounds: { openSessions?: number; identities?: number } = {},
  ) {
    this.unlisten = onIdentityTouched(db.writer, (project, touch) => {
      this.identityEpochs.set(project, this.epochOf(project) + 1);
      if (this.preparing) this.pendingTouches.push([project, touch]);
      else this.caches.get(project)?.identityTouched(touch);
    });
  }

  /** The project's user-defined intents changed (/udi): conversations that close from now on use `rules`. */
  intentsChanged(project: string, rules: readonly IntentRule[]): void {
    const cache = this.caches.get(project);
    if (cache) cache.intents = rules;
  }

  /** Stores a request's events; `source` may be a validating thunk that throws a 400. */
  ingest(scope: Scope, source: EventSource, receivedAt: number, options: IngestOptions = {}) {
    return new Promise<IngestResult>((resolve, reject) => {
      this.queue.push({ scope, source, state: 'waiting', events: [], receivedAt, options, resolve, reject });
      void this.pump();
    });
  }

  close(): void {
    this.unlisten();
  }

  /**
   * Loads a project's cache, its events' filter included, while no request waits: an embedded import
   * reads and sorts its input before its first batch, and a store's filters are a cost proportional
   * to the store that its first batches paid (issue 16's incremental import: ~0.9 s at 650k events).
   * The events' filter is given up between ranges once a request arrives (it stays deferred, as
   * without this), so a small import into a big store waits at most one range; likewise once `stop`
   * says so (the service is closing). Best effort: a failure leaves the first request to load what
   * it needs, and meet the failure itself.
   */
  async warm(project: string, stop: () => boolean = () => false): Promise<void> {
    if (this.pumping || this.queue.length > 0) return;
    this.pumping = true;
    try {
      // As in prepare(): a user route's identity change made between the load's statements waits,
      // and reaches the cache once it is held (it was lost, found by review).
      this.preparing = true;
      let cache: ProjectCache;
      try {
        cache = await this.cacheFor(this.db.readWritten, project);
      } finally {
        this.applyPendingTouches();
      }
      await warmEventFilter(this.db.readWritten, cache, () => this.queue.length > 0 || stop());
    } catch (error) {
      // Nothing to undo: a filter given up half-loaded holds stored ids only and stays deferred. The
      // first request loads what it needs, and meets the failure itself.
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      this.log(`ingest: loading project ${project}'s cache ahead failed (${reason})`);
    } finally {
      this.pumping = false;
      if (this.queue.length > 0) void this.pump();
    }
  }

  /** Whether a project's events' filter is loaded; undefined while its cache is not held. */
  eventFilterLoaded(project: string): boolean | undefined {
    return this.caches.get(project)?.known.events.loaded;
  }

  /** How many open sessions a project's cache holds; undefined while its cache is not held. */
  openSessionsHeld(project: string): number | undefined {
    return this.caches.get(project)?.sessions.size;
  }

  /** How many caller ids and devices a project's cache holds; undefined while its cache is not held. */
  identitiesHeld(project: string): number | undefined {
    return this.caches.get(project)?.identity.held;
  }

  /** The projects whose caches are held. */
  get cachedProjects(): string[] {
    return [...this.caches.keys()];
  }

  /**
   * One transaction in flight: while DuckDB commits group N, group N+1 is planned (its reads see N's
   * rows on the writer connection), then written as soon as N is durable. Planning never waits for a
   * commit it does not need; writing always does.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    let inFlight: InFlight | undefined;
    try {
      for (;;) {
        const group = this.takeGroup();
        if (group.length === 0) {
          if (!inFlight) {
            this.trimIdentities();
            break;
          }
          await this.retryFailed(await this.finish(inFlight));
          inFlight = undefined;
          continue;
        }
        if (inFlight && this.identitiesOver()) {
          // Traffic that never lets the ingest idle: this group waits for the commit, not planned
          // alongside it, so the trim runs where nothing is planned or committing.
          await this.retryFailed(await this.finish(inFlight));
          inFlight = undefined;
        }
        if (!inFlight) this.trimIdentities();
        const planned = await this.prepareParts(group, this.db.readWritten, inFlight);
        if (inFlight) {
          const failed = await this.finish(inFlight);
          inFlight = undefined;
          if (failed) {
            // Planned on top of a transaction that rolled back: plan again after its requests.
            this.log(
              `ingest: the ${group.length} request(s) planned meanwhile are planned again after the failed ones`,
            );
            // Undone in memory, its requests back at the head of the queue.
            for (const p of planned.parts) p.cache.forget(touchedBy(p.planners));
            this.queue.unshift(...group);
            await this.retryAlone(failed.jobs, failed.error);
            continue;
          }
        }
        if (planned.refused.length === 0) {
          inFlight = await this.execute(planned.parts);
          continue;
        }
        // A refused request (or a failed read) of some project: the other projects' parts are written,
        // then that project's requests one at a time, so only the refused one is refused, before any
        // later request of it is taken.
        const others = planned.parts.length > 0 ? await this.execute(planned.parts) : undefined;
        if (others) await this.retryFailed(await this.finish(others));
        for (const { jobs, error } of planned.refused) await this.retryAlone(jobs, error);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Validates a waiting request (once); an invalid one is answered at once. */
  private validated(job: Job): boolean {
    if (job.state !== 'waiting') return job.state === 'valid';
    const started = performance.now();
    try {
      job.events = typeof job.source === 'function' ? job.source() : job.source;
      job.state = 'valid';
    } catch (error) {
      job.state = 'refused';
      job.reject(error);
    } finally {
      this.stats.ms.validate += performance.now() - started;
    }
    return job.state === 'valid';
  }

  /**
   * Validates the next waiting request while DuckDB executes a statement of the current transaction
   * (validation is pure, so doing it early is safe): the main thread's biggest job overlaps the
   * database's, instead of queueing behind it.
   */
  private readonly validateAhead = (): void => {
    const next = this.queue.find((job) => job.state === 'waiting');
    if (next) this.validated(next);
  };

  /**
   * The waiting valid requests at the head of the queue, in arrival order, within the group's size and
   * its number of projects: each project's requests keep their order, as they are taken in turn.
   */
  private takeGroup(): Job[] {
    const group: Job[] = [];
    const projects = new Set<string>();
    let events = 0;
    while (this.queue.length > 0) {
      const job = this.queue[0]!;
      if (!this.validated(job)) {
        this.queue.shift();
        continue;
      }
      if (group.length > 0 && events + job.events.length > GROUP_EVENTS) break;
      const project = job.scope.projectId;
      if (!projects.has(project) && projects.size >= GROUP_PROJECTS) break;
      projects.add(project);
      events += job.events.length;
      group.push(this.queue.shift()!);
    }
    return group;
  }

  private async cacheFor(tx: Queryable, project: string): Promise<ProjectCache> {
    let cache = this.caches.get(project);
    if (cache) this.caches.delete(project);
    else cache = await loadProjectCache(tx, project);
    this.caches.set(project, cache);
    this.letGo(project);
    return cache;
  }

  /**
   * Lets the least recently used caches go, down to the bound; never `using`'s, nor those of the
   * groups committing and being planned (a commit settles or forgets what it touched in that very
   * cache; a planned part writes from it).
   */
  private letGo(using: string): void {
    for (const project of this.caches.keys()) {
      if (this.caches.size <= this.maxCaches) return;
      if (project !== using && !this.holding.has(project)) this.caches.delete(project);
    }
  }

  /**
   * Dedup, load, plan and analyse a group in memory and on reads, one part per project in the order
   * of their first requests; nothing is written yet. A part that fails (a refused request, a failed
   * read) forgets what it planned and is returned apart, so it does not sink the other projects'.
   */
  private async prepareParts(
    jobs: Job[],
    q: Queryable,
    committing?: InFlight,
  ): Promise<{ parts: Prepared[]; refused: Array<{ jobs: Job[]; error: unknown }> }> {
    const byProject = new Map<string, Job[]>();
    for (const job of jobs) {
      const part = byProject.get(job.scope.projectId);
      if (part) part.push(job);
      else byProject.set(job.scope.projectId, [job]);
    }
    this.holding.clear();
    for (const p of committing?.prepared ?? []) this.holding.add(p.cache.projectId);
    for (const project of byProject.keys()) this.holding.add(project);
    this.preparing = true;
    const parts: Prepared[] = [];
    const refused: Array<{ jobs: Job[]; error: unknown }> = [];
    try {
      for (const part of byProject.values()) {
        try {
          parts.push(await this.plan(part, q));
        } catch (error) {
          refused.push({ jobs: part, error });
        }
      }
      return { parts, refused };
    } finally {
      this.holding.clear();
      this.applyPendingTouches();
    }
  }

  /** `prepareParts`, all or nothing: the first failure is thrown, the parts planned before it forgotten. */
  private async prepare(jobs: Job[], q: Queryable = this.db.readWritten): Promise<Prepared[]> {
    const { parts, refused } = await this.prepareParts(jobs, q);
    const [first] = refused;
    if (first === undefined) return parts;
    for (const p of parts) p.cache.forget(touchedBy(p.planners));
    throw first.error;
  }

  /** Ends a load or plan that held identity changes back, and lets the caches see them. */
  private applyPendingTouches(): void {
    this.preparing = false;
    for (const [project, touch] of this.pendingTouches.splice(0)) {
      this.caches.get(project)?.identityTouched(touch);
    }
  }

  private epochOf(project: string): number {
    return this.identityEpochs.get(project) ?? 0;
  }

  private async plan(jobs: Job[], q: Queryable): Promise<Prepared> {
    const project = jobs[0]!.scope.projectId;
    const epoch = this.epochOf(project);
    const timer = this.stats.start();
    const cache = await this.cacheFor(q, project);
    return planGroup(q, cache, jobs, this.analyser, epoch, timer);
  }

  /** Writes a prepared group and sends its COMMIT; the group is answered by `finish`. */
  private async execute(parts: Prepared[]): Promise<InFlight | undefined> {
    const timer = this.stats.start();
    try {
      const { value: answers, committed } = await this.db.writeUntilCommit(async (tx) => {
        // A user route changed identity rows since this group was planned: its plan may be stale.
        if (parts.some((p) => this.epochOf(p.cache.projectId) !== p.epoch)) throw new StalePlan();
        return this.writeParts(tx, parts, timer);
      });
      // COMMIT is running on DuckDB's thread: validate the next request meanwhile.
      setImmediate(this.validateAhead);
      this.letGoOpen(parts);
      return { prepared: parts, committed, answers };
    } catch (error) {
      for (const p of parts) p.cache.forget(touchedBy(p.planners));
      if (error instanceof StalePlan) {
        this.stats.stalePlans++;
        return this.runExclusive(jobsOf(parts));
      }
      await this.retryAlone(jobsOf(parts), error);
      return undefined;
    }
  }

  /** The parts' rows, inside one transaction; the answers of all their requests, in order. */
  private writeParts(
    tx: Queryable,
    parts: readonly Prepared[],
    timer: Parameters<typeof writePlanned>[2],
  ): Promise<InFlight['answers']> {
    return writePlanned(tx, parts, timer, this.validateAhead);
  }

  /**
   * Plans and writes a group inside one transaction, where no user route can change identity in
   * between: the way out for a group whose pipelined plan went stale, so a stream of identify calls
   * cannot starve ingestion.
   */
  private async runExclusive(jobs: Job[]): Promise<InFlight | undefined> {
    const timer = this.stats.start();
    let prepared: Prepared[] = [];
    try {
      const { value: answers, committed } = await this.db.writeUntilCommit(async (tx) => {
        prepared = await this.prepare(jobs, tx);
        return this.writeParts(tx, prepared, timer);
      });
      if (prepared.length === 0) throw new Error('the exclusive write ran without a plan');
      this.letGoOpen(prepared);
      return { prepared, committed, answers };
    } catch (error) {
      for (const p of prepared) p.cache.forget(touchedBy(p.planners));
      await this.retryAlone(jobs, error);
      return undefined;
    }
  }

  private identitiesHeldAll(): number {
    let held = 0;
    for (const cache of this.caches.values()) held += cache.identity.held;
    return held;
  }

  private identitiesOver(): boolean {
    return this.identitiesHeldAll() > (this.bounds.identities ?? IDENTITIES_KEPT);
  }

  /**
   * Past the bound, the identity rows used least recently go: first those of the projects planned
   * least recently, within each the ids and devices named longest ago. Only where nothing is planned
   * or committing (a planned group writes from them, a commit's live events read its users from them):
   * when the ingest is idle, or before a group is planned once the commit before it was awaited.
   */
  private trimIdentities(): void {
    const bound = this.bounds.identities ?? IDENTITIES_KEPT;
    const held = this.identitiesHeldAll();
    if (held <= bound) return;
    let excess = held - Math.floor(bound * TRIMMED_TO);
    for (const cache of this.caches.values()) {
      if (excess <= 0) return;
      const drop = Math.min(excess, cache.identity.held);
      cache.identity.letGo(drop);
      excess -= drop;
    }
  }

  /**
   * Once a group is written, before the next is planned (ProjectCache.letGoOpen): past the bound,
   * open sessions go from the caches of the projects planned least recently first, never those of the
   * group whose commit is running.
   */
  private letGoOpen(parts: readonly Prepared[]): void {
    let excess = -(this.bounds.openSessions ?? OPEN_SESSIONS);
    for (const cache of this.caches.values()) excess += cache.sessions.size;
    if (excess <= 0) return;
    const keep = new Map(parts.map((p) => [p.cache, touchedBy(p.planners)]));
    for (const cache of this.caches.values()) {
      excess -= cache.letGoOpen(excess, keep.get(cache));
      if (excess <= 0) return;
    }
  }

  /** Waits for a group's COMMIT and answers its requests; on failure, forgets it and says which failed. */
  private async finish(f: InFlight): Promise<{ jobs: Job[]; error: unknown } | undefined> {
    const jobs = jobsOf(f.prepared);
    const timer = this.stats.start();
    try {
      await f.committed;
    } catch (error) {
      for (const p of f.prepared) p.cache.forget(touchedBy(p.planners));
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      this.log(`ingest: COMMIT failed (${reason}); its ${jobs.length} request(s) are retried one at a time`);
      return { jobs, error };
    }
    timer.lap('commit');
    const planners = f.prepared.flatMap((p) => p.planners);
    for (const p of f.prepared) {
      p.cache.settle(touchedBy(p.planners));
      this.onCommitted?.(p.jobs[0]!.scope, newsOf(p), p.cache.identity);
    }
    this.stats.done(
      jobs.length,
      planners.reduce((n, p) => n + p.accepted, 0),
    );
    jobs.forEach((job, i) => {
      const p = planners[i]!;
      const result = { accepted: p.accepted, duplicates: p.duplicates };
      const answer = f.answers[i];
      job.resolve(answer ? { ...result, answer } : result);
    });
    return undefined;
  }

  private async retryFailed(failed: { jobs: Job[]; error: unknown } | undefined): Promise<void> {
    if (failed) await this.retryAlone(failed.jobs, failed.error);
  }

  /**
   * A failed group's requests, each in a transaction of its own (one bad request never sinks the
   * others); a request that fails alone gets its own error.
   */
  private async retryAlone(jobs: Job[], error: unknown): Promise<void> {
    const grown = await this.grewFor(error);
    if (jobs.length === 1 && !grown) {
      jobs[0]!.reject(error);
      return;
    }
    for (const job of jobs) {
      for (;;) {
        let prepared: Prepared[];
        try {
          prepared = await this.prepare([job]);
        } catch (alone) {
          job.reject(alone);
          break;
        }
        // A failed write is retried, or rejected, by execute itself (through here).
        const inFlight = await this.execute(prepared);
        const failed = inFlight && (await this.finish(inFlight));
        if (!failed) break;
        if (await this.grewFor(failed.error)) continue;
        job.reject(failed.error);
        break;
      }
    }
  }

  /**
   * DuckDB had no memory for a write: where its limit may grow (the embedded service's), it grows, and
   * the write is tried again (store/database.ts memoryCeiling).
   */
  private async grewFor(error: unknown): Promise<boolean> {
    if (!isOutOfMemory(error) || !(await this.db.raiseMemoryLimit())) return false;
    this.log('ingest: DuckDB ran out of memory; its limit is raised and the write tried again');
    return true;
  }
}
