import { dirname } from 'node:path';
import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { dbFind, postQueue } from '../client/routes.js';
import {
  CHECKPOINT_VERSION,
  type Checkpoint,
  checkpointLineage,
  checkpointPath,
  fingerprint,
  identifyFile,
  inputContent,
  readCheckpoint,
  removeCheckpoint,
  removeSuperseded,
  writeCheckpoint,
} from '../importer/checkpoint.js';
import type { Ack, Refusal } from '../importer/delivery.js';
import { removeStaleSpills } from '../importer/external-sort.js';
import {
  type CheckpointData,
  type ImportStats,
  type PipelineEnd,
  runPipeline,
} from '../importer/pipeline.js';
import { RejectFile, rejectionLine } from '../importer/rejects.js';
import type { SessionizerOptions } from '../importer/sessionizer.js';
import {
  type DroppedField,
  type Rejection,
  type SourceRef,
  type WireJson,
  where,
} from '../importer/types.js';
import { type ImportSummaryData, RERUN_WITHOUT_CHECKPOINT } from '../render/import-summary.js';
import { fileErrorReason } from '../shared/file-errors.js';
import { LIMITS } from '../shared/limits.js';
import { type ConnectionMode, processAlive, refuseUnusableDataDir } from './connect.js';
import { UsageError } from './errors.js';
import { FollowedConnection } from './followed-connection.js';
import { detectPresets, type ImportFlags, type ImportSettings, importSettings } from './import-options.js';
import { type ServiceFeature, serviceFeatures } from './service-features.js';

export type { ImportFlags };

/** cli.md's summary object, plus `skipped`; its one definition lives with its renderer. */
export type ImportSummary = ImportSummaryData;

export interface ImportResult {
  summary: ImportSummary;
  /** `already-complete`: the checkpoint says this input was fully imported; nothing was sent. */
  end: PipelineEnd | 'already-complete';
  dryRun: boolean;
  checkpoint: string | undefined;
}

/** What an import sends through. */
interface ImportConnection {
  client: Client;
  mode: ConnectionMode;
  /** The embedded service's queue in-process (connect.ts); absent: `postQueue` over HTTP. */
  postQueue?: ((events: readonly unknown[]) => Promise<Ack>) | undefined;
  close(): Promise<void>;
}

export interface ImportDeps {
  /** Opens the connection; not called for a dry run. */
  connect: () => Promise<ImportConnection>;
  /** The `cas serve` there is now, when the one `used` stopped answering (restarted on another port). */
  refresh?: ((used: ImportConnection) => Promise<ImportConnection | undefined>) | undefined;
  dataDir: string;
  /** Where events go, for the checkpoint fingerprint (endpoint or embedded data dir, and project). */
  target: { endpoint: string; project: string };
  stats: ImportStats;
  /** A bad record's line (always shown, like errors). */
  warn: (line: string) => void;
  /** Dry run: the wire events as they would be sent. */
  onEvent?: (event: WireJson) => void;
  /** A note for the user (stderr), e.g. what a service without our extensions cannot guarantee. */
  note?: (line: string) => void;
  onStart?: (info: { totalBytes: number | undefined; resumedAt: number }) => void;
  signal?: AbortSignal;
  stdin?: NodeJS.ReadableStream;
  /** Where the run's sort may spill (default: the system's temp folder). */
  tmpDir?: string;
  /**
   * The checkpoint could not be saved (why, in words): the run goes on without one, told once on
   * stderr, since every event is stored once whatever is sent again.
   */
  onCheckpointLost?: (reason: string) => void;
}

/** Requests in flight, each from a lane of its own (the events of a session share a lane). */
const CONCURRENCY = 4;
/** Events per request into a service without our import features (the hosted one). */
const HTTP_BATCH = 500;
/**
 * Events per request into our own service: in-process, or a `cas serve` (it lists our import
 * features). Every request costs the service a few lookups in the store whose cost grows with it:
 * the ids it may already hold, the sessions, conversations and users it names. Into a store that
 * held the first 250k turns, the last 100k of a 300k export (half of them already stored) took
 * 19.5 s in batches of 500 (16 in flight) and 10.1 s in batches of 2,000 (4 in flight); the same
 * events in flight at once, so memory is unchanged (peak RSS 475 and 460 MB). Into an empty store
 * it is as fast (300k turns: 21.5-23.4 s either way, alternated pairs); into a `cas serve`, 26.5 s
 * against 21.0 s.
 */
const OWN_SERVICE_BATCH = LIMITS.eventsPerRequest;

/** 400/409/413 refuse a batch's content (decisions §4); the importer isolates the events named. */
export function refusalOf(error: unknown): Refusal | undefined {
  if (!(error instanceof HttpError)) return undefined;
  const issues = error.issues ?? [];
  const named = issues.some((i) => /^\[\d+\]/.test(i.path));
  if ([400, 409, 413, 422].includes(error.status) || (error.status === 404 && named)) {
    return { status: error.status, message: error.message, issues };
  }
  return undefined;
}

/** The options that shape events: a change to any of them is a different import (new checkpoint). */
function eventOptions(s: ImportSettings): unknown {
  return {
    kind: s.spec.kind ?? null,
    sources: [...s.spec.sources].sort(),
    defaults: [...s.spec.defaults].sort(),
    tz: s.spec.tz,
    gapMs: s.gapMs,
    noEnd: s.noEnd,
    keepDuplicates: s.keepDuplicates,
    formats: s.files.map((f) => f.format),
    // Only when a preset reads a file, so checkpoints of flat imports keep their fingerprint.
    ...(s.files.some((f) => f.preset !== undefined) ? { presets: s.files.map((f) => f.preset ?? null) } : {}),
  };
}

/** The checkpoint file of this input (none for stdin or a dry run) and the input's total size. */
async function locate(
  s: ImportSettings,
  deps: ImportDeps,
): Promise<{ path?: string; lineage?: string; totalBytes?: number }> {
  if (s.files.some((f) => f.path === '-')) return {};
  const ids = await Promise.all(s.files.map((f) => identifyFile(f.path)));
  const totalBytes = ids.reduce((n, f) => n + f.size, 0);
  if (s.dryRun) return { totalBytes };
  const options = eventOptions(s);
  return {
    path: checkpointPath(deps.dataDir, fingerprint(ids, options, deps.target)),
    lineage: checkpointLineage(
      ids.map((f) => f.path),
      options,
      deps.target,
    ),
    totalBytes,
  };
}

export function summarize(stats: ImportStats, started: number, end: ImportResult['end']): ImportSummary {
  const stopped = end === 'interrupted' || end === 'max-errors';
  return {
    records: stats.records,
    events: stats.events,
    accepted: stats.accepted,
    duplicates: stats.duplicates,
    duplicate_records: stats.duplicateRecords,
    rejected: stats.rejected,
    ends_refused: stats.endsRefused,
    batches: stats.batches,
    retries: stats.retries,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    skipped: stats.skipped,
    stopped,
    ...(stopped
      ? { unread: stats.unread, unsent: Math.max(0, stats.staged - stats.skipped - stats.acknowledged) }
      : {}),
  };
}

/**
 * Which import extensions the target has (our service: all; a server without `features` in its
 * /healthz, such as the hosted service: none, and the user is told what that costs).
 */
async function extensionsOf(
  client: Client,
  deps: ImportDeps,
  s: ImportSettings,
): Promise<SessionizerOptions['extensions']> {
  const features = await serviceFeatures(client);
  const has = (f: ServiceFeature) => features.includes(f);
  const extensions = {
    provisionalEnds: has('import-provisional-ends'),
    derivedSessions: has('import-derived-sessions'),
  };
  if (!extensions.provisionalEnds && !s.noEnd)
    deps.note?.(
      'cas: this service does not reopen sessions an import ended: import each session in one run (a later run adding to a session already ended by the import is refused, 409), or use --no-end',
    );
  return extensions;
}

/** Opening the reject file is part of checking the flags: a bad path is a usage error (exit 2). */
async function openRejects(path: string | undefined, append: boolean): Promise<RejectFile | undefined> {
  if (path === undefined) return undefined;
  // `-` is stdin among the inputs; as a reject file it made a file named `-` (found by probing).
  if (path === '-') {
    throw new UsageError('--reject-file: give a file path; "-" is no file (stdout holds the summary)');
  }
  const file = new RejectFile(path, append);
  try {
    await file.ready();
    return file;
  } catch (error) {
    await file.close().catch(() => undefined);
    const why =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'its folder does not exist'
        : fileErrorReason(error);
    throw new UsageError(`--reject-file: cannot write ${path}: ${why}`);
  }
}

/** `cas import`: checks the flags, picks up a checkpoint, runs the pipeline, returns the summary. */
export async function runImport(
  paths: readonly string[],
  flags: ImportFlags,
  deps: ImportDeps,
): Promise<ImportResult> {
  const started = Date.now();
  // Its checkpoints and spills live there whatever the endpoint.
  refuseUnusableDataDir(deps.dataDir);
  const s = await detectPresets(importSettings(paths, flags), flags, deps.stdin, deps.signal);
  const { stats } = deps;
  const { path, lineage, totalBytes } = await locate(s, deps);
  if (path && s.restart) await removeCheckpoint(path);
  let previous = path && s.resume && !s.restart ? await readCheckpoint(path, pathPrint(path)) : undefined;
  // Connected first when a checkpoint is to be trusted: the store must still hold what it covers.
  const witnesses = previous ? witnessesOf(previous) : [];
  let connection = witnesses.length > 0 && !s.dryRun ? await deps.connect() : undefined;
  if (connection && previous && !(await stillStored(connection, witnesses))) {
    deps.warn(
      `cas: the checkpoint of this input says ${previous.position.toLocaleString('en')} records were imported, but the service does not hold its events (a store restored from a backup?): importing from the start; what is stored is not stored twice`,
    );
    previous = undefined;
  }
  // Its size and time kept, an input edited in place was "already imported", or resumed at a position
  // of another sorted run (found by probing: rows lost).
  const content = previous?.content;
  if (content !== undefined && content !== (await inputContent(s.files.map((f) => f.path)))) {
    const since = previous?.complete ? 'it was imported' : 'its checkpoint was written';
    deps.warn(
      `cas: this input changed since ${since} (its size and time did not): importing it from the start; what is stored is not stored twice`,
    );
    previous = undefined;
  }
  if (previous?.complete) {
    await connection?.close();
    Object.assign(stats, {
      // Checkpoints written before `records` was kept count only the records mapped.
      records: previous.records ?? previous.position,
      skipped: previous.position,
      rejected: previous.rejected,
    });
    const end = 'already-complete';
    return { summary: summarize(stats, started, end), end, dryRun: false, checkpoint: path };
  }
  if (deps.tmpDir !== undefined) await removeStaleSpills(deps.tmpDir, processAlive);
  const rejects = await openRejects(s.rejectFile, previous !== undefined);
  const onReject = (r: Rejection): void => {
    deps.warn(rejectionLine(r));
    rejects?.write(r);
  };
  const onEndRefused = (source: SourceRef, reason: string): void => deps.warn(`${where(source)}: ${reason}`);
  const onDropped = ({ field, reason, source }: DroppedField): void =>
    deps.note?.(
      `${where(source)}: left out of this record and of every later one that has it: ${reason}; take what you need with --map <name>=${field}.<key>`,
    );
  deps.onStart?.({ totalBytes, resumedAt: previous?.position ?? 0 });
  connection ??= s.dryRun ? undefined : await deps.connect();
  const refresh = deps.refresh ?? (async () => undefined);
  const followed = connection && new FollowedConnection(connection, refresh);
  try {
    const client = connection?.client;
    // A dry run shows what our own service would be sent.
    const extensions = client
      ? await extensionsOf(client, deps, s)
      : { provisionalEnds: true, derivedSessions: true };
    // In-process, or a service that lists our import features (a `cas serve`).
    const ownService = connection?.postQueue !== undefined || extensions.provisionalEnds;
    const end = await runPipeline({
      files: s.files,
      spec: s.spec,
      session: { gapMs: s.gapMs, noEnd: s.noEnd, keepDuplicates: s.keepDuplicates, extensions },
      batchSize: s.batchSize ?? (ownService ? OWN_SERVICE_BATCH : HTTP_BATCH),
      concurrency: s.concurrency ?? CONCURRENCY,
      maxErrors: s.maxErrors,
      resume: previous,
      send: followed && {
        send:
          connection?.postQueue ??
          ((events) =>
            followed.call((c) =>
              postQueue(c, events, {
                ...(deps.signal ? { signal: deps.signal } : {}),
                // Our service places history before final ends; to the hosted one the flag means nothing.
                history: extensions.provisionalEnds,
              }),
            )),
        refusal: refusalOf,
      },
      onEvent: deps.onEvent,
      onReject,
      onEndRefused,
      onDropped,
      onCheckpoint: path && lineage ? keeper(path, lineage, started, deps) : undefined,
      stats,
      signal: deps.signal,
      stdin: s.stdin ?? deps.stdin,
      keepRaw: rejects !== undefined,
      tmpDir: deps.tmpDir,
      onNote: deps.warn,
      inputBytes: totalBytes,
      owner: process.pid,
    });
    return { summary: summarize(stats, started, end), end, dryRun: s.dryRun, checkpoint: path };
  } finally {
    await followed?.close();
    await connection?.close();
    await rejects?.close();
  }
}

/** The events a checkpoint names as stored: the last one acknowledged, and those spread over the run. */
function witnessesOf(c: { witness?: string | undefined; witnesses?: string[] | undefined }): string[] {
  return [...new Set([...(c.witnesses ?? []), ...(c.witness === undefined ? [] : [c.witness])])];
}

/**
 * Whether the service holds every event a checkpoint named as stored. A service that cannot say (no
 * `/db` routes, an error) is trusted: the checkpoint stands, as it did before witnesses.
 */
async function stillStored(connection: ImportConnection, eventIds: readonly string[]): Promise<boolean> {
  try {
    const found = await dbFind(connection.client, 'events', 'find', {
      filter: { event_id: { $in: eventIds } },
      projection: { event_id: 1 },
      limit: eventIds.length,
    });
    const held = new Set((Array.isArray(found) ? found : []).map((d) => d.event_id));
    return eventIds.every((id) => held.has(id));
  } catch {
    return true;
  }
}

const pathPrint = (path: string): string => (path.split('/').pop() ?? '').replace(/\.json$/, '');

/**
 * Saves checkpoints until one cannot be saved (a data directory whose `imports` is not writable, a
 * full disk); then says so once and saves no more. It stopped the run, every event already stored,
 * saying "the checkpoint is saved" and blaming the owner of the directory (found by probing).
 */
function keeper(
  path: string,
  lineage: string,
  /** When the run identified its input (its fingerprint's files). */
  startedAt: number,
  deps: ImportDeps,
): (data: CheckpointData) => Promise<void> {
  let lost = false;
  let saved = false;
  return async (data) => {
    if (lost) return;
    try {
      await save(path, lineage, data);
    } catch (error) {
      lost = true;
      // A folder in the checkpoint's place was named by the folder it is in only (probe).
      const { code } = error as NodeJS.ErrnoException;
      const reason =
        code === 'EISDIR' ? `${path} is a folder` : `${fileErrorReason(error)} in ${dirname(path)}`;
      deps.onCheckpointLost?.(reason);
      deps.warn(
        `cas: cannot save the checkpoint (${reason}); the import goes on without one: if it stops, ${RERUN_WITHOUT_CHECKPOINT}`,
      );
      return;
    }
    // Once this version's checkpoint is saved, those of the input's earlier versions are of no use.
    if (saved) return;
    saved = true;
    await removeSuperseded(path, { lineage, fingerprint: pathPrint(path), startedAt }).catch(() => 0);
  };
}

function save(path: string, lineage: string, data: CheckpointData): Promise<void> {
  const checkpoint: Checkpoint = {
    version: CHECKPOINT_VERSION,
    fingerprint: pathPrint(path),
    updated_at: new Date().toISOString(),
    ...data,
    lineage,
  };
  return writeCheckpoint(path, checkpoint);
}
