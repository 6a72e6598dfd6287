import type { Issue } from '../../shared/errors.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import type { RouteEvent } from '../../shared/events.js';
import type { ConversationAnalyser } from '../analysis/analyser.js';
import { conflict, invalidInput } from '../errors.js';
import { type IdentityTouch, onIdentityTouched, type Scope } from '../identity/identity.js';
import { IdentityChanges } from '../identity/model.js';
import type { Database, Queryable } from '../store/database.js';
import { analyseAndLayOut } from './analyse-batch.js';
import { loadProjectCache, prefetch } from './cache-load.js';
import { findDuplicates } from './dedup.js';
import { IngestStats } from './ingest-stats.js';
import { Planner } from './planner.js';
import type { ProjectCache, Touched } from './project-cache.js';
import { type EventRow, routeAnswer } from './rows.js';
import { writeGroup } from './write-batch.js';

export interface IngestResult {
  accepted: number;
  duplicates: number;
  /** For per-event routes: the stored rows as the route answers them. */
  answer?: RouteEvent[];
}

export interface IngestOptions {
  /** Issue paths: `[3].session_id` for the queue; per-event routes drop the index. */
  paths?: (issue: Issue) => Issue;
  /** Build a per-event route answer (decisions §4). */
  answer?: boolean;
}

/**
 * A request's events, or how to get them: validation runs when the request's turn comes, so it does
 * not hold up the event loop while another transaction waits on DuckDB (each awaited statement would
 * otherwise queue behind whole-batch validations of requests that cannot be written yet anyway).
 */
export type EventSource = readonly WireEvent[] | (() => readonly WireEvent[]);

interface Job {
  scope: Scope;
  source: EventSource;
  state: 'waiting' | 'valid' | 'refused';
  events: readonly WireEvent[];
  receivedAt: number;
  options: IngestOptions;
  resolve(result: IngestResult): void;
  reject(error: unknown): void;
}

/** A group planned in memory, ready to write. */
interface Prepared {
  jobs: Job[];
  cache: ProjectCache;
  ch: IdentityChanges;
  planners: Planner[];
  laidOut: EventRow[][];
  /** The identity epoch when planning began (see `identityEpoch`). */
  epoch: number;
}

/** A written group whose COMMIT is running. */
interface InFlight {
  prepared: Prepared;
  committed: Promise<void>;
  /** Per-event route answers, built when the group was written. */
  answers: Array<RouteEvent[] | undefined>;
}

/** Thrown inside a write when its plan went stale before it could run; the group is planned again. */
class StalePlan extends Error {}

const MAX_ISSUES = 100;
/** Requests waiting together are committed together, up to this many events per transaction. */
const GROUP_EVENTS = 16_000;

function capped(issues: Issue[]): Issue[] {
  if (issues.length <= MAX_ISSUES) return issues;
  return [
    ...issues.slice(0, MAX_ISSUES),
    { path: '', message: `${issues.length - MAX_ISSUES} more issues not shown` },
  ];
}

/** A request with problems is refused whole: 400 before 409 (validation before state). */
function refuse(planner: Planner, options: IngestOptions): void {
  const paths = options.paths ?? ((issue: Issue) => issue);
  if (planner.invalid.length > 0) throw invalidInput(capped(planner.invalid.map(paths)));
  const [first] = planner.conflicts;
  if (!first) return;
  const issues = planner.conflicts.map(({ path, message }) => paths({ path, message }));
  throw conflict(first.code, `${issues[0]!.path}: ${first.message}`, capped(issues));
}

function union(planners: readonly Planner[]): Touched {
  return {
    sessions: new Set(planners.flatMap((p) => [...p.touched.sessions])),
    conversations: new Set(planners.flatMap((p) => [...p.touched.conversations])),
  };
}

/**
 * The one way events get into the database. Each request is judged whole before anything is written
 * (duplicates, then state: 400/409 with `[index].field` issues, nothing stored) and answered only after
 * the commit, so a 200 means durable. Requests that queue up while a transaction runs are committed
 * together (group commit): each is planned on its own, but their rows share one append per table, one
 * UPDATE per table and one commit. If any of them fails, the group is undone and its requests run one
 * by one, so a bad request never sinks the others. The project cache is changed in place; a failed
 * transaction forgets whatever it touched, and the database, rolled back too, refills it on next use.
 */
export class Ingestor {
  readonly stats = new IngestStats();
  private readonly caches = new Map<string, ProjectCache>();
  private readonly queue: Job[] = [];
  private pumping = false;
  /** Bumped whenever a user route changes identity rows, so a plan made before it is not written. */
  private identityEpoch = 0;
  /** While a group is planned, identity changes wait here: planning must see one identity state. */
  private preparing = false;
  private readonly pendingTouches: Array<[project: string, touch: IdentityTouch]> = [];
  private readonly unlisten: () => void;

  constructor(
    private readonly db: Database,
    private readonly analyser: ConversationAnalyser,
  ) {
    this.unlisten = onIdentityTouched(db.writer, (project, touch) => {
      this.identityEpoch++;
      if (this.preparing) this.pendingTouches.push([project, touch]);
      else this.caches.get(project)?.identityTouched(touch);
    });
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
          if (!inFlight) break;
          await this.retryFailed(await this.finish(inFlight));
          inFlight = undefined;
          continue;
        }
        let prepared: Prepared;
        try {
          prepared = await this.prepare(group);
        } catch (error) {
          // A refused request (or a failed read): settle what is in flight, then run the group's
          // requests one at a time so only the refused one is refused.
          if (inFlight) await this.retryFailed(await this.finish(inFlight));
          inFlight = undefined;
          await this.retryAlone(group, error);
          continue;
        }
        if (inFlight) {
          const failed = await this.finish(inFlight);
          inFlight = undefined;
          if (failed) {
            // Planned on top of a transaction that rolled back: plan again after its requests.
            this.discard(prepared);
            await this.retryAlone(failed.jobs, failed.error);
            continue;
          }
        }
        inFlight = await this.execute(prepared);
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

  /** The waiting valid requests of the first one's project, in arrival order, within the group size. */
  private takeGroup(): Job[] {
    const group: Job[] = [];
    let events = 0;
    while (this.queue.length > 0) {
      const job = this.queue[0]!;
      if (group.length > 0 && job.scope.projectId !== group[0]!.scope.projectId) break;
      if (!this.validated(job)) {
        this.queue.shift();
        continue;
      }
      if (group.length > 0 && events + job.events.length > GROUP_EVENTS) break;
      events += job.events.length;
      group.push(this.queue.shift()!);
    }
    return group;
  }

  private async cacheFor(tx: Queryable, project: string): Promise<ProjectCache> {
    let cache = this.caches.get(project);
    if (!cache) {
      cache = await loadProjectCache(tx, project);
      this.caches.set(project, cache);
    }
    return cache;
  }

  /** Dedup, load, plan and analyse a group in memory and on reads; nothing is written yet. */
  private async prepare(jobs: Job[], q: Queryable = this.db.readWritten): Promise<Prepared> {
    this.preparing = true;
    try {
      return await this.plan(jobs, q);
    } finally {
      this.preparing = false;
      for (const [project, touch] of this.pendingTouches.splice(0)) {
        this.caches.get(project)?.identityTouched(touch);
      }
    }
  }

  private async plan(jobs: Job[], q: Queryable): Promise<Prepared> {
    const epoch = this.identityEpoch;
    const timer = this.stats.start();
    const cache = await this.cacheFor(q, jobs[0]!.scope.projectId);
    const ch = new IdentityChanges();
    const planners: Planner[] = [];
    try {
      const planned = new Set<string>();
      for (const job of jobs) {
        const duplicate = await findDuplicates(q, cache, job.events, planned);
        await prefetch(
          q,
          cache,
          job.events.filter((_, i) => !duplicate[i]),
        );
        timer.lap('load');
        const planner = new Planner(cache, job.receivedAt, ch);
        planners.push(planner);
        planner.plan(job.events, duplicate);
        refuse(planner, job.options);
        job.events.forEach((e, i) => {
          if (!duplicate[i] && e.event_id !== undefined) planned.add(e.event_id);
        });
        timer.lap('plan');
      }
      const laidOut = await analyseAndLayOut(q, cache, planners, this.analyser);
      timer.lap('analyse');
      return { jobs, cache, ch, planners, laidOut, epoch };
    } catch (error) {
      cache.forget(union(planners));
      throw error;
    }
  }

  /** Writes a prepared group and sends its COMMIT; the group is answered by `finish`. */
  private async execute(p: Prepared): Promise<InFlight | undefined> {
    const timer = this.stats.start();
    try {
      const { value: answers, committed } = await this.db.writeUntilCommit(async (tx) => {
        // A user route changed identity rows since this group was planned: its plan may be stale.
        if (this.identityEpoch !== p.epoch) throw new StalePlan();
        return this.writePrepared(tx, p, timer);
      });
      // COMMIT is running on DuckDB's thread: validate the next request meanwhile.
      setImmediate(this.validateAhead);
      return { prepared: p, committed, answers };
    } catch (error) {
      p.cache.forget(union(p.planners));
      if (error instanceof StalePlan) {
        this.stats.stalePlans++;
        return this.runExclusive(p.jobs);
      }
      await this.retryAlone(p.jobs, error);
      return undefined;
    }
  }

  /**
   * Plans and writes a group inside one transaction, where no user route can change identity in
   * between: the way out for a group whose pipelined plan went stale, so a stream of identify calls
   * cannot starve ingestion.
   */
  private async runExclusive(jobs: Job[]): Promise<InFlight | undefined> {
    const timer = this.stats.start();
    let prepared: Prepared | undefined;
    try {
      const { value: answers, committed } = await this.db.writeUntilCommit(async (tx) => {
        prepared = await this.prepare(jobs, tx);
        return this.writePrepared(tx, prepared, timer);
      });
      if (!prepared) throw new Error('the exclusive write ran without a plan');
      return { prepared, committed, answers };
    } catch (error) {
      if (prepared) prepared.cache.forget(union(prepared.planners));
      await this.retryAlone(jobs, error);
      return undefined;
    }
  }

  /** The group's rows, inside its transaction; returns the per-event route answers. */
  private async writePrepared(
    tx: Queryable,
    p: Prepared,
    timer: { lap(phase: 'write'): void },
  ): Promise<Array<RouteEvent[] | undefined>> {
    // Answers name users as the plan saw them; identity may move on before the commit is done.
    const answers = p.jobs.map((job, i) =>
      job.options.answer ? routeAnswer(p.laidOut[i]!, p.cache.identity) : undefined,
    );
    const parts = p.laidOut.map((r, i) => ({ rows: r, receivedAt: p.planners[i]!.receivedAt }));
    await writeGroup(tx, p.cache, p.ch, parts, union(p.planners), this.validateAhead);
    timer.lap('write');
    return answers;
  }

  /** Waits for a group's COMMIT and answers its requests; on failure, forgets it and says which failed. */
  private async finish(f: InFlight): Promise<{ jobs: Job[]; error: unknown } | undefined> {
    const { jobs, planners, cache } = f.prepared;
    const timer = this.stats.start();
    try {
      await f.committed;
    } catch (error) {
      cache.forget(union(planners));
      return { jobs, error };
    }
    timer.lap('commit');
    cache.settle(union(planners));
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

  /** Undoes a group's planning in memory and puts its requests back at the head of the queue. */
  private discard(p: Prepared): void {
    p.cache.forget(union(p.planners));
    this.queue.unshift(...p.jobs);
  }

  private async retryFailed(failed: { jobs: Job[]; error: unknown } | undefined): Promise<void> {
    if (failed) await this.retryAlone(failed.jobs, failed.error);
  }

  /**
   * A failed group's requests, each in a transaction of its own (one bad request never sinks the
   * others); a request that fails alone gets its own error.
   */
  private async retryAlone(jobs: Job[], error: unknown): Promise<void> {
    if (jobs.length === 1) {
      jobs[0]!.reject(error);
      return;
    }
    for (const job of jobs) {
      let prepared: Prepared;
      try {
        prepared = await this.prepare([job]);
      } catch (alone) {
        job.reject(alone);
        continue;
      }
      const inFlight = await this.execute(prepared);
      if (inFlight) {
        const failed = await this.finish(inFlight);
        if (failed) job.reject(failed.error);
      }
    }
  }
}
