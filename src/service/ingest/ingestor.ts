import type { Issue } from '../../shared/errors.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import type { RouteEvent } from '../../shared/events.js';
import type { ConversationAnalyser } from '../analysis/analyser.js';
import { conflict, invalidInput } from '../errors.js';
import { onIdentityTouched, type Scope } from '../identity/identity.js';
import { IdentityChanges } from '../identity/model.js';
import type { Database, Queryable } from '../store/database.js';
import { analyseAndLayOut } from './analyse-batch.js';
import { loadProjectCache, prefetch } from './cache-load.js';
import { findDuplicates } from './dedup.js';
import { IngestStats } from './ingest-stats.js';
import { Planner } from './planner.js';
import type { ProjectCache, Touched } from './project-cache.js';
import { routeAnswer } from './rows.js';
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
  private readonly unlisten: () => void;

  constructor(
    private readonly db: Database,
    private readonly analyser: ConversationAnalyser,
  ) {
    this.unlisten = onIdentityTouched(db.writer, (project, touch) =>
      this.caches.get(project)?.identityTouched(touch),
    );
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

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let group = this.takeGroup(); group.length > 0; group = this.takeGroup()) {
        await this.runGroup(group, true);
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

  private async runGroup(jobs: Job[], mayRetrySeparately: boolean): Promise<void> {
    const planners: Planner[] = [];
    let cache: ProjectCache | undefined;
    const timer = this.stats.start();
    try {
      const rows = await this.db.write(async (tx) => {
        cache = await this.cacheFor(tx, jobs[0]!.scope.projectId);
        const ch = new IdentityChanges();
        const planned = new Set<string>();
        for (const job of jobs) {
          const duplicate = await findDuplicates(tx, cache, job.events, planned);
          await prefetch(
            tx,
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
        const laidOut = await analyseAndLayOut(tx, cache, planners, this.analyser);
        timer.lap('analyse');
        const parts = laidOut.map((r, i) => ({ rows: r, receivedAt: planners[i]!.receivedAt }));
        await writeGroup(tx, cache, ch, parts, union(planners), this.validateAhead);
        timer.lap('write');
        // Runs once db.write has sent COMMIT, so the next validation overlaps the commit's fsync.
        setImmediate(this.validateAhead);
        return laidOut;
      });
      timer.lap('commit');
      const settled = cache!;
      settled.settle(union(planners));
      this.stats.done(
        jobs.length,
        planners.reduce((n, p) => n + p.accepted, 0),
      );
      jobs.forEach((job, i) => {
        const p = planners[i]!;
        const result = { accepted: p.accepted, duplicates: p.duplicates };
        job.resolve(
          job.options.answer ? { ...result, answer: routeAnswer(rows[i]!, settled.identity) } : result,
        );
      });
    } catch (error) {
      cache?.forget(union(planners));
      if (jobs.length === 1 || !mayRetrySeparately) {
        for (const job of jobs) job.reject(error);
        return;
      }
      for (const job of jobs) await this.runGroup([job], false);
    }
  }
}
