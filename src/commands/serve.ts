import { readFileSync } from 'node:fs';
import { InvalidIntentsError } from '../service/analysis/intent-rules.js';
import { inspectServerFile, removeServerFile, writeServerFile } from '../service/data-dir.js';
import { PriceFileError } from '../service/ingest/price-table.js';
import { classifyDataDirError, DataDirLockedError } from '../service/lock-error.js';
import { loopbackUrlFor, randomToken } from '../service/server-identity.js';
import { type RunningService, startService } from '../service/service.js';
import { ProvisionConflictError, RevokedKeyError } from '../service/store/tenants.js';
import { fileErrorReason } from '../shared/file-errors.js';
import { parseJsonText } from '../shared/json-syntax.js';
import type { Limits } from '../shared/limits.js';
import { apiKeyProblem } from '../shared/orgkeys.js';
import { type ReadLimits, SERVE_MEMORY_LIMIT } from '../shared/read-limits.js';
import {
  LOCK_NOTE_AFTER_MS,
  LOCK_WAIT_MS,
  lockWaitNote,
  pauseUnlessAborted,
  processAlive,
  refuseUnusableDataDir,
} from './connect.js';
import { AlreadyServedError, InterruptedError, UsageError } from './errors.js';

export interface ServeOptions {
  host: string;
  port: number;
  /** `--ws-port`: a second listener for live-event websockets only. */
  wsPort?: number | undefined;
  dataDir: string;
  apiKey?: string | undefined;
  project?: string | undefined;
  /** Whether `--api-key` or `--project` was given as a flag: then both must be known. */
  provisionFlag?: boolean | undefined;
  /** Path of a JSON file of user-defined intents (`--intents`). */
  intents?: string | undefined;
  /** Limits given as flags (`--max-body`, `--request-timeout`, ...); the rest keep decisions §2's defaults. */
  limits?: Partial<Limits> | undefined;
  /** Reader pool, query time and response budgets (`--read-connections`, `--query-timeout`, ...). */
  reads?: Partial<ReadLimits> | undefined;
  /** DuckDB's memory limit (`--memory-limit`); SERVE_MEMORY_LIMIT when absent. */
  memoryLimit?: string | undefined;
  /** `--prices <file>`: LiteLLM's price file or a local one, merged over the built-in table. */
  prices?: string | undefined;
}

export interface ServeInfo {
  url: string;
  api_key: string;
  project_id: string;
  data_dir: string;
  /** The `--ws-port` listener, when asked for. */
  ws_url?: string;
}

export interface ServeHandle {
  info: ServeInfo;
  service: RunningService;
  /** Resolves once the service has stopped after SIGINT/SIGTERM (in-flight requests finished, DB closed). */
  stopped: Promise<void>;
}

/** The `--intents` file as JSON; a missing or malformed file is a usage error naming the file. */
function readIntents(path: string): { value: unknown; source: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--intents ${path}: ${fileErrorReason(error)}`);
  }
  const value = parseJsonText(text, (why) => new UsageError(`--intents ${path}: not valid JSON (${why})`));
  return { value, source: path };
}

/** A --host or --port that cannot be listened on is the caller's to change: a usage error naming it. */
function listenUsageError(error: unknown, options: ServeOptions): UsageError | undefined {
  // The live-events listener (service/live/install.ts) marks its own failures.
  const ws = (error as { wsPort?: unknown } | undefined)?.wsPort === true;
  const port = ws ? `--ws-port ${options.wsPort}` : `--port ${options.port}`;
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new UsageError(`${port}: already in use on ${options.host}; 0 picks a free port`);
    case 'EACCES':
      return new UsageError(`${port}: not allowed for this user (ports below 1024 need privileges)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UsageError(`--host ${options.host}: not an address of this machine`);
    default:
      return undefined;
  }
}

/** SIGHUP too: a closed terminal would otherwise end the server without its clean-up. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Runs the service in the foreground and announces it in the data directory for other CLI processes. */
export async function runServe(
  options: ServeOptions,
  deps: { log: (line: string) => void },
): Promise<ServeHandle> {
  // A stop asked for while it starts (a service manager's quick SIGTERM) stops it once it is up, with
  // exit 0 as any stop; it was "interrupted", exit 130 (found by probing).
  let early: string | undefined;
  const stop = new AbortController();
  const onEarly = (signal: string) => {
    early ??= signal;
    stop.abort(new InterruptedError());
  };
  for (const s of STOP_SIGNALS) process.on(s, onEarly);
  try {
    const handle = await startServing(options, deps, stop.signal);
    if (early !== undefined) handle.stop(early);
    return handle;
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onEarly);
  }
}

/**
 * Another command holding the directory a moment (an import, a chart) is waited for, as every other
 * command waits (connect.ts): `cas serve` gave up at once, so a restart racing a command failed and
 * left no server running (found by probing).
 */
async function startWhenFree(
  start: () => Promise<RunningService>,
  stopped: AbortSignal,
  log: (line: string) => void,
): Promise<RunningService> {
  const started = Date.now();
  let said = false;
  for (;;) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof DataDirLockedError)) throw error;
      // A running cas serve does not let go in a moment: it was waited for 10 s, then "in use by another
      // process", the server that holds it unnamed (found by probing).
      const served = inspectServerFile(error.dataDir);
      if (served.kind === 'valid' && served.file.pid !== process.pid && processAlive(served.file.pid))
        throw new AlreadyServedError(served.file.url, served.file.pid, error.dataDir);
      const waited = Date.now() - started;
      if (waited > LOCK_WAIT_MS) throw error;
      if (!said && waited >= LOCK_NOTE_AFTER_MS) {
        log(lockWaitNote(error.dataDir));
        said = true;
      }
      // Nothing is up yet to stop: a SIGINT/SIGTERM meanwhile was waited out, then exit 5 (found by probing).
      await pauseUnlessAborted(250, stopped);
    }
  }
}

async function startServing(
  options: ServeOptions,
  deps: { log: (line: string) => void },
  stopSignal: AbortSignal,
): Promise<ServeHandle & { stop: (signal: string) => void }> {
  // One without the other was dropped without a word, the local key served instead (found by probing).
  if (options.provisionFlag === true && (options.apiKey === undefined || options.project === undefined)) {
    const [given, missing] =
      options.apiKey === undefined ? ['--project', '--api-key'] : ['--api-key', '--project'];
    throw new UsageError(`${given} needs ${missing} too: cas serve provisions the key for that project`);
  }
  const provision =
    options.apiKey !== undefined && options.project !== undefined
      ? { apiKey: options.apiKey, projectId: options.project }
      : undefined;
  // Provisioned, it could never sign in (found by probing): refused as PUT /orgkeys refuses it.
  const keyProblem = provision ? apiKeyProblem(provision.apiKey) : undefined;
  if (keyProblem !== undefined) throw new UsageError(`--api-key: ${keyProblem}`);
  const intents = options.intents === undefined ? undefined : readIntents(options.intents);
  refuseUnusableDataDir(options.dataDir);
  const serverSecret = randomToken();
  const service = await startWhenFree(
    () =>
      startService({
        serverSecret,
        dataDir: options.dataDir,
        host: options.host,
        port: options.port,
        ...(options.wsPort === undefined ? {} : { wsPort: options.wsPort }),
        log: deps.log,
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.reads ? { reads: options.reads } : {}),
        memoryLimit: options.memoryLimit ?? SERVE_MEMORY_LIMIT,
        ...(provision ? { provision } : {}),
        ...(intents ? { intents } : {}),
        prices: options.prices,
      }),
    stopSignal,
    deps.log,
  ).catch((error: unknown) => {
    if (error instanceof InvalidIntentsError) throw new UsageError(`--intents ${error.message}`);
    if (error instanceof PriceFileError) throw new UsageError(`--prices ${error.message}`);
    // An operator's mistake: it was exit 1, "this is a bug" (found by probing).
    if (error instanceof RevokedKeyError && provision) {
      throw new UsageError(
        `--api-key: this key was revoked (cas keys revoke); a revoked key is never valid again: give another, or make one with cas keys create`,
      );
    }
    if (error instanceof ProvisionConflictError && provision) {
      throw new UsageError(
        `--project ${provision.projectId}: belongs to another organization than the key --api-key gives`,
      );
    }
    throw listenUsageError(error, options) ?? error;
  });
  // Other CLI processes send the local key only to a loopback address whose server proves the secret.
  const reachable = loopbackUrlFor(options.host, service.port);
  // Removed on every exit, an uncaught exception's included; only kill -9 or a crash of V8 leaves it,
  // and then its dead pid or failed proof tells connect() to drop it.
  const forget = () => removeServerFile(options.dataDir, process.pid);
  if (reachable) {
    try {
      writeServerFile(options.dataDir, { url: reachable, pid: process.pid, secret: serverSecret });
    } catch (error) {
      // A full or read-only disk: say so (not "a bug"), and stop the service cleanly.
      await service.close();
      throw classifyDataDirError(error, options.dataDir) ?? error;
    }
    process.on('exit', forget);
  } else {
    deps.log(`listening on ${options.host} only: other cas commands over this data dir cannot reach it`);
  }
  let stop: (signal: string) => void = () => undefined;
  let stopping = false;
  const stopped = new Promise<void>((resolve) => {
    stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      deps.log(`${signal}: stopping (finishing in-flight requests)`);
      for (const s of STOP_SIGNALS) process.off(s, stop);
      process.off('exit', forget);
      forget();
      service.close().then(resolve, (error: unknown) => {
        deps.log(`error while stopping: ${error instanceof Error ? error.message : String(error)}`);
        resolve();
      });
    };
    for (const s of STOP_SIGNALS) process.on(s, stop);
  });
  return {
    service,
    stopped,
    stop,
    info: {
      url: service.url,
      api_key: provision?.apiKey ?? service.local.api_key,
      project_id: provision?.projectId ?? service.local.project_id,
      data_dir: options.dataDir,
      ...(service.wsUrl === undefined ? {} : { ws_url: service.wsUrl }),
    },
  };
}
