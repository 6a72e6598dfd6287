import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { postQueue } from '../client/routes.js';
import {
  CHECKPOINT_VERSION,
  type Checkpoint,
  checkpointPath,
  fingerprint,
  identifyFile,
  readCheckpoint,
  removeCheckpoint,
  writeCheckpoint,
} from '../importer/checkpoint.js';
import type { Refusal } from '../importer/delivery.js';
import {
  type CheckpointData,
  type ImportStats,
  type PipelineEnd,
  runPipeline,
} from '../importer/pipeline.js';
import { RejectFile, rejectionLine } from '../importer/rejects.js';
import type { Rejection, WireJson } from '../importer/types.js';
import type { ImportSummaryData } from '../render/import-summary.js';
import { type ImportFlags, type ImportSettings, importSettings } from './import-options.js';

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

export interface ImportDeps {
  /** Opens the connection; not called for a dry run. */
  connect: () => Promise<{ client: Client; close(): Promise<void> }>;
  dataDir: string;
  /** Where events go, for the checkpoint fingerprint (endpoint or embedded data dir, and project). */
  target: { endpoint: string; project: string };
  stats: ImportStats;
  /** A bad record's line (always shown, like errors). */
  warn: (line: string) => void;
  /** Dry run: the wire events as they would be sent. */
  onEvent?: (event: WireJson) => void;
  onStart?: (info: { totalBytes: number | undefined; resumedAt: number }) => void;
  signal?: AbortSignal;
  stdin?: NodeJS.ReadableStream;
}

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
    formats: s.files.map((f) => f.format),
  };
}

/** The checkpoint file of this input (none for stdin or a dry run) and the input's total size. */
async function locate(s: ImportSettings, deps: ImportDeps): Promise<{ path?: string; totalBytes?: number }> {
  if (s.files.some((f) => f.path === '-')) return {};
  const ids = await Promise.all(s.files.map((f) => identifyFile(f.path)));
  const totalBytes = ids.reduce((n, f) => n + f.size, 0);
  if (s.dryRun) return { totalBytes };
  return { path: checkpointPath(deps.dataDir, fingerprint(ids, eventOptions(s), deps.target)), totalBytes };
}

function summarize(stats: ImportStats, started: number): ImportSummary {
  return {
    records: stats.skipped + stats.records,
    events: stats.events,
    accepted: stats.accepted,
    duplicates: stats.duplicates,
    rejected: stats.rejected,
    batches: stats.batches,
    retries: stats.retries,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    skipped: stats.skipped,
  };
}

/** `cas import`: checks the flags, picks up a checkpoint, runs the pipeline, returns the summary. */
export async function runImport(
  paths: readonly string[],
  flags: ImportFlags,
  deps: ImportDeps,
): Promise<ImportResult> {
  const started = Date.now();
  const s = importSettings(paths, flags);
  const { stats } = deps;
  const { path, totalBytes } = await locate(s, deps);
  if (path && s.restart) await removeCheckpoint(path);
  const previous = path && s.resume && !s.restart ? await readCheckpoint(path, pathPrint(path)) : undefined;
  if (previous?.complete) {
    Object.assign(stats, { skipped: previous.position, rejected: previous.rejected });
    return { summary: summarize(stats, started), end: 'already-complete', dryRun: false, checkpoint: path };
  }
  const rejects =
    s.rejectFile === undefined ? undefined : new RejectFile(s.rejectFile, previous !== undefined);
  await rejects?.ready();
  const onReject = (r: Rejection): void => {
    deps.warn(rejectionLine(r));
    rejects?.write(r);
  };
  deps.onStart?.({ totalBytes, resumedAt: previous?.position ?? 0 });
  const connection = s.dryRun ? undefined : await deps.connect();
  try {
    const client = connection?.client;
    const end = await runPipeline({
      files: s.files,
      spec: s.spec,
      gapMs: s.gapMs,
      noEnd: s.noEnd,
      batchSize: s.batchSize,
      concurrency: s.concurrency,
      maxErrors: s.maxErrors,
      resume: previous,
      send: client && {
        send: (events) => postQueue(client, events, deps.signal ? { signal: deps.signal } : {}),
        refusal: refusalOf,
      },
      onEvent: deps.onEvent,
      onReject,
      onCheckpoint: path ? (data) => save(path, data) : undefined,
      stats,
      signal: deps.signal,
      stdin: deps.stdin,
    });
    return { summary: summarize(stats, started), end, dryRun: s.dryRun, checkpoint: path };
  } finally {
    await connection?.close();
    await rejects?.close();
  }
}

const pathPrint = (path: string): string => (path.split('/').pop() ?? '').replace(/\.json$/, '');

function save(path: string, data: CheckpointData): Promise<void> {
  const checkpoint: Checkpoint = {
    version: CHECKPOINT_VERSION,
    fingerprint: pathPrint(path),
    updated_at: new Date().toISOString(),
    ...data,
  };
  return writeCheckpoint(path, checkpoint);
}
