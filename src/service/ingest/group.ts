import type { Issue } from '../../shared/errors.js';
import type { WireEvent } from '../../shared/event-bodies.js';
import type { RouteEvent } from '../../shared/events.js';
import type { ConversationAnalyser } from '../analysis/analyser.js';
import { conflict, invalidInput, notFound } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import { IdentityChanges } from '../identity/model.js';
import type { Queryable } from '../store/database.js';
import { analyseAndLayOut } from './analyse-batch.js';
import { prefetch } from './cache-load.js';
import { findDuplicates } from './dedup.js';
import type { Phase } from './ingest-stats.js';
import { Planner } from './planner.js';
import type { ProjectCache, Touched } from './project-cache.js';
import { type EventRow, routeAnswer } from './rows.js';
import { type Restorable, restoredUnchanged, writeGroup } from './write-batch.js';

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
  /**
   * History, as `cas import` sends it (our extension, `?history=true` on the queue): an event older
   * than its session's final end or its conversation's is placed before that end, as one run over all
   * the records would place it. Otherwise such an event is refused, 409 (decisions §4: ends a client
   * sent are final).
   */
  history?: boolean;
}

/**
 * A request's events, or how to get them: validation runs when the request's turn comes, so it does
 * not hold up the event loop while another transaction waits on DuckDB (each awaited statement would
 * otherwise queue behind whole-batch validations of requests that cannot be written yet anyway).
 */
export type EventSource = readonly WireEvent[] | (() => readonly WireEvent[]);

/** One request in the ingest queue. */
export interface Job {
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
export interface Prepared {
  jobs: Job[];
  cache: ProjectCache;
  ch: IdentityChanges;
  planners: Planner[];
  laidOut: EventRow[][];
  /** Its project's identity epoch when planning began (see the ingestor's `identityEpochs`). */
  epoch: number;
  /** What the write's replays deleted, by event id (set by `writePlanned`). */
  deleted?: Restorable;
}

/** The rows live sockets are told of: a replay's rows stored again unchanged went out before. */
export function newsOf(p: Prepared): EventRow[][] {
  const deleted = p.deleted;
  if (deleted === undefined || deleted.size === 0) return p.laidOut;
  return p.laidOut.map((rows) => rows.filter((row) => !restoredUnchanged(row, deleted)));
}

/** A written group whose COMMIT is running: one planned part per project, in the order written. */
export interface InFlight {
  prepared: Prepared[];
  committed: Promise<void>;
  /** Per-event route answers, built when the group was written: each part's requests in turn. */
  answers: Array<RouteEvent[] | undefined>;
}

/** The requests of a group's parts, in the order they were planned and are answered. */
export const jobsOf = (parts: readonly Prepared[]): Job[] => parts.flatMap((p) => p.jobs);

/** Thrown inside a write when its plan went stale before it could run; the group is planned again. */
export class StalePlan extends Error {}

type Timer = { lap(phase: Phase): void };

const MAX_ISSUES = 100;

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
  const message = `${issues[0]!.path}: ${first.message}`;
  if (first.code !== 'unknown_previous') throw conflict(first.code, message, capped(issues));
  if (options.answer) throw notFound(message);
  throw conflict('conflict', message, capped(issues));
}

/** Everything the group's planners touched, which a commit settles and a failure forgets. */
export function touchedBy(planners: readonly Planner[]): Touched {
  return {
    sessions: new Set(planners.flatMap((p) => [...p.touched.sessions])),
    conversations: new Set(planners.flatMap((p) => [...p.touched.conversations])),
  };
}

/**
 * Dedup, load, plan and analyse a group against the project cache; nothing is written. Each request
 * is planned on its own (a refused one throws its 400/409), ids accepted by an earlier request of the
 * group count as seen. On failure the cache forgets what the group touched.
 */
export async function planGroup(
  q: Queryable,
  cache: ProjectCache,
  jobs: Job[],
  analyser: ConversationAnalyser,
  epoch: number,
  timer: Timer,
): Promise<Prepared> {
  const ch = new IdentityChanges();
  const planners: Planner[] = [];
  cache.rebuilt.clear();
  try {
    const planned = new Set<string>();
    // Sessions earlier requests of the group touched, kept as they grow and read only while the next
    // request is planned (a union, or a copy, per request was quadratic in the group's requests).
    const earlier = new Set<string>();
    for (const job of jobs) {
      const duplicate = await findDuplicates(q, cache, job.events, planned);
      const history = job.options.history === true;
      await prefetch(
        q,
        cache,
        job.events.filter((_, i) => !duplicate[i]),
        history,
      );
      timer.lap('load');
      const planner = new Planner(cache, job.receivedAt, ch, history);
      planners.push(planner);
      planner.plan(job.events, duplicate, earlier);
      refuse(planner, job.options);
      for (const id of planner.touched.sessions) earlier.add(id);
      job.events.forEach((e, i) => {
        if (!duplicate[i] && e.event_id !== undefined) planned.add(e.event_id);
      });
      timer.lap('plan');
    }
    const laidOut = await analyseAndLayOut(q, cache, planners, analyser);
    timer.lap('analyse');
    return { jobs, cache, ch, planners, laidOut, epoch };
  } catch (error) {
    cache.forget(touchedBy(planners));
    throw error;
  }
}

/**
 * Planned parts' rows, all projects in one write (write-batch.ts), inside the caller's transaction;
 * returns the per-event route answers of every part's requests, in order.
 */
export async function writePlanned(
  tx: Queryable,
  parts: readonly Prepared[],
  timer: Timer,
  /** Synchronous work to overlap with DuckDB's statements (see writeGroup). */
  meanwhile: () => void,
): Promise<Array<RouteEvent[] | undefined>> {
  // Answers name users as the plan saw them; identity may move on before the commit is done.
  const answers = parts.flatMap((p) =>
    p.jobs.map((job, i) => (job.options.answer ? routeAnswer(p.laidOut[i]!, p.cache.identity) : undefined)),
  );
  const writes = parts.map((p) => ({
    cache: p.cache,
    ch: p.ch,
    parts: p.laidOut.map((r, i) => ({ rows: r, receivedAt: p.planners[i]!.receivedAt })),
    touched: touchedBy(p.planners),
    wiped: p.planners.flatMap((planner) => planner.wiped),
  }));
  const deleted = await writeGroup(tx, writes, meanwhile);
  parts.forEach((p, i) => {
    p.deleted = deleted[i]!;
  });
  timer.lap('write');
  return answers;
}
