import { ClientError, HttpError, isWasmMemoryFailure } from '../client/errors.js';
import { AlreadyServedError, InterruptedError, ServerBusyError, UsageError } from '../commands/errors.js';
import {
  causeOf,
  DataDirError,
  DataDirLockedError,
  firstLine,
  storageProblemOf,
} from '../service/lock-error.js';
import { pathProblem } from '../shared/file-errors.js';
import type { ConfigSources } from './config-sources.js';

export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  unavailable: 5,
  rejected: 6,
  network: 7,
  invalid: 8,
  damaged: 9,
  interrupted: 130,
} as const;

export interface Failure {
  code: number;
  /** One line for stderr. */
  message: string;
  hint?: string;
}

/** cli.md "Exit codes": the typed error decides; anything untyped is a bug (exit 1). */
export function describeFailure(error: unknown): Failure {
  if (error instanceof UsageError) {
    return { code: EXIT.usage, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  }
  if (error instanceof InterruptedError) return { code: EXIT.interrupted, message: error.message };
  if (error instanceof ServerBusyError) {
    return {
      code: EXIT.unavailable,
      message: error.message,
      hint: 'run the command again when it has fewer clients, give a longer --retry-time, or start it with higher --max-connections-per-address or --max-connections',
    };
  }
  if (error instanceof AlreadyServedError) {
    return {
      code: EXIT.unavailable,
      message: error.message,
      hint: `the other commands use it as it is; to start this one instead, stop it first (Ctrl-C where it runs, or kill ${error.pid})`,
    };
  }
  if (error instanceof DataDirLockedError) {
    return {
      code: EXIT.unavailable,
      message: error.message,
      hint: 'run the command again when the other process is done, or point --data-dir elsewhere',
    };
  }
  if (error instanceof DataDirError) return describeDataDirError(error);
  if (error instanceof ClientError) {
    const failure = describeClientError(error);
    return error.maybeDone ? { ...failure, hint: MAYBE_DONE } : failure;
  }
  const problem = storageProblemOf(error);
  if (problem !== undefined) {
    // A write the system refused outside the database (server.json, an import checkpoint, a reject file).
    return describeDataDirError(new DataDirError(problem, '', firstLine(error)));
  }
  const path = pathProblem(error);
  if (path !== undefined) {
    return {
      code: EXIT.usage,
      message: path,
      hint: 'check the paths given: --data-dir, --out and the files named',
    };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EMFILE' || code === 'ENFILE') {
    // Loading its modules under `ulimit -n 20` was "this is a bug" (found by probing).
    return {
      code: EXIT.unavailable,
      message: `cas ran out of files it may open at once (${firstLine(error)})`,
      hint: 'raise the limit (ulimit -n 1024) and run the command again',
    };
  }
  if (isWasmMemoryFailure(error) || unmappedDriver(error)) {
    return {
      code: EXIT.unavailable,
      message: `the memory cas needs cannot be reserved under this process's limit (${firstLine(error)})`,
      hint: 'raise the virtual memory limit (ulimit -v unlimited); where it must stay, NODE_OPTIONS=--disable-wasm-trap-handler lets cas run under a lower one',
    };
  }
  const driver = missingDriver(error);
  if (driver !== undefined) {
    return {
      code: EXIT.unexpected,
      message: `the DuckDB driver cannot be loaded: ${driver}`,
      hint: 'the cas executable needs duckdb.node and libduckdb.so beside it, as the release ships them',
    };
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { code: EXIT.unexpected, message, hint: 'this is a bug; run with -v for details and report it' };
}

/** DuckDB's library refused by the loader for want of address space (`ulimit -v`), not missing. */
function unmappedDriver(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === 'ERR_DLOPEN_FAILED' &&
    typeof e.message === 'string' &&
    /failed to map segment/.test(e.message)
  );
}

/**
 * The single-file binary loads DuckDB's native files from beside itself: one copied alone reported
 * "Cannot find module …/duckdb.node" as a bug (found by probing).
 */
function missingDriver(error: unknown): string | undefined {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.message !== 'string') return undefined;
  const first = e.message.split('\n')[0] ?? '';
  if (e.code === 'MODULE_NOT_FOUND' && /duckdb\.node/.test(first)) return first;
  if (e.code === 'ERR_DLOPEN_FAILED' && /duckdb/.test(first)) return first;
  return undefined;
}

const STORAGE_HINTS = {
  full: 'free some space (or raise the quota) and run the command again',
  'read-only': 'remount the file system read-write or point --data-dir at a writable directory',
  denied: 'run as the owner of the data directory or point --data-dir elsewhere',
  damaged:
    'nothing was changed; keep a copy of the data directory, then restore cas.duckdb from a backup, or move the damaged file aside to start without its data',
  newer:
    'nothing was changed; use that version of cas (or a later one) with it, or point --data-dir elsewhere',
  files: 'nothing was changed; raise the limit (ulimit -n 1024) and run the command again',
} as const;

const MAYBE_DONE =
  'the service may have carried it out before the answer was lost, so it was not sent again: check (cas keys list, cas cohorts list, cas intents list) before running it again';

function describeClientError(error: ClientError): Failure {
  const where = `${error.method} ${error.path}`;
  const tries = error.attempts > 1 ? ` after ${error.attempts} attempts` : '';
  if (error instanceof HttpError) {
    const message = `${error.status} from ${where}${tries}: ${error.message}`;
    if (error.status === 401 || error.status === 403)
      return { code: EXIT.auth, message, hint: 'check --api-key and --project' };
    if (error.status === 404) return { code: EXIT.notFound, message };
    if (error.status === 429 || error.status >= 500 || error.status === 408)
      return { code: EXIT.unavailable, message };
    return { code: EXIT.invalid, message };
  }
  if (error.kind === 'network')
    return { code: EXIT.network, message: `cannot reach ${where}${tries}: ${error.message}` };
  if (error.kind === 'timeout')
    return { code: EXIT.unavailable, message: `${where}${tries}: ${error.message}` };
  return {
    code: EXIT.unexpected,
    message: `the service's answer did not match the interface: ${error.message}`,
    hint: 'a proxy between may have cut or changed the answer; run with -v to see each request, and report it if the endpoint is a cas service',
  };
}

/** Disk full, read-only, permission: the machine's state (exit 5, as busy); damage needs a person (9). */
function describeDataDirError(error: DataDirError): Failure {
  return {
    code: error.problem === 'damaged' ? EXIT.damaged : EXIT.unavailable,
    message: error.message,
    hint: STORAGE_HINTS[error.problem],
  };
}

/**
 * A 401/403 with no endpoint set, the key coming from the environment or a profile: the local
 * service knows only its own key and those `cas serve --api-key` provisioned, so a hosted key left
 * in MLSDK_API_KEY refused every local command with a hint to check the flags (found by probing).
 */
export function localKeyHint(sources: ConfigSources): string | undefined {
  const key = sources.apiKey;
  if (sources.endpoint !== undefined || key === undefined || key.kind === 'flag') return undefined;
  const from = key.kind === 'env' ? key.name : `profile "${key.name}"`;
  return `the key is ${from}'s and no endpoint is set: the local service knows only its own key and those cas serve --api-key provisioned (unset it, or give an endpoint)`;
}

/** Standard output that could not be written (a full disk under `> file`), in one line. */
export function outputProblem(error: NodeJS.ErrnoException): string {
  const problem = storageProblemOf(error);
  const cause = problem === undefined ? firstLine(error) : causeOf(problem);
  const code = error.code === undefined ? '' : ` (${error.code})`;
  return `cannot write standard output: ${cause}${code}; what this command printed there is lost`;
}
