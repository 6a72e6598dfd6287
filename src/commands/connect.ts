import { lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { attemptLine, retryLine } from '../client/attempt-lines.js';
import { type ClientError, NetworkError } from '../client/errors.js';
import { type ProbeResult, probeHealth } from '../client/health-probe.js';
import { type AttemptInfo, type Client, createClient } from '../client/http-client.js';
import { localQueueSender } from '../client/local-queue.js';
import type { RetryInfo } from '../client/retry.js';
import {
  inspectServerFile,
  readCredentials,
  removeStaleServerFile,
  type ServerFile,
  serverFilePath,
} from '../service/data-dir.js';
import { DataDirLockedError, storageRefusalOf } from '../service/lock-error.js';
import { dataDirIdentity, proofMatches, randomToken } from '../service/server-identity.js';
import type { QueueResponse } from '../shared/events.js';
import { isLoopbackUrl } from '../shared/loopback-url.js';
import { withoutPassword } from '../shared/url-password.js';
import type { Config } from './config.js';
import { ServerBusyError, UsageError } from './errors.js';

export type ConnectionMode = 'remote' | 'local-server' | 'embedded';

export interface Connection {
  client: Client;
  mode: ConnectionMode;
  /**
   * The queue route reached in-process, for the embedded service only (cli.md allows it; the same
   * ingest core and answers): the bulk path of `cas import`. Everything else goes through `client`.
   */
  postQueue?: (events: readonly unknown[]) => Promise<QueueResponse>;
  close(): Promise<void>;
}

export interface ConnectDeps {
  log: (line: string) => void;
  /** Told of every retry the client makes (`cas import` counts them); `-v` also logs each one. */
  onRetry?: ((info: RetryInfo) => void) | undefined;
  /**
   * `--prices <file>` of `cas import` / `cas reprice`: the embedded service prices with it. A remote
   * endpoint or a running `cas serve` prices with its own table, so there it is refused.
   */
  prices?: string | undefined;
  /** What the connection is for: an embedded service started for `import` is tuned for it. */
  workload?: 'import' | undefined;
  /** An embedded service started for it runs on a thread of its own (a big import). */
  thread?: boolean | undefined;
  /** false: an embedded service does not keep the process alive by itself (the client library). */
  holdsProcess?: boolean | undefined;
  /** Ends a wait for the data directory (`cas import` interrupted meanwhile) with its reason. */
  signal?: AbortSignal | undefined;
}

/**
 * A bad price file is a usage error, said before anything starts (loaded only when given); a dry run,
 * which starts no service, checks it too.
 */
export async function checkPriceFile(path: string): Promise<void> {
  const { PriceFileError, readPriceFile } = await import('../service/ingest/price-table.js');
  try {
    readPriceFile(path);
  } catch (error) {
    throw error instanceof PriceFileError ? new UsageError(`--prices ${error.message}`) : error;
  }
}

function refusePrices(deps: ConnectDeps, where: string): void {
  if (deps.prices === undefined) return;
  throw new UsageError(
    `--prices ${deps.prices}: applies only to the embedded service; ${where} prices with its own table (start it with cas serve --prices)`,
  );
}

/**
 * `local`: the service over this data directory (embedded, or the `cas serve` holding it). Its 503 for
 * a full or read-only disk is not retried: five attempts took ~12 s to print the same one line
 * (found by probing), and a remote service's storage, which may recover, keeps its retries.
 */
function clientFor(
  config: Config,
  endpoint: string,
  apiKey: string,
  projectId: string,
  deps: ConnectDeps,
  local: 'server.json' | 'embedded' | false,
): Client {
  const moved = local === 'server.json' ? movedElsewhere(config.dataDir, endpoint) : () => false;
  return createClient({
    endpoint,
    apiKey,
    projectId,
    timeoutMs: config.timeoutMs,
    retries: config.retries,
    retryTimeMs: config.retryTimeMs,
    proxy: config.proxy,
    ...(local !== false
      ? { final: (error: ClientError) => storageRefusalOf(error) !== undefined || moved(error) }
      : {}),
    onRetry: (info: RetryInfo) => {
      deps.onRetry?.(info);
      if (config.verbose) deps.log(retryLine(info));
    },
    onAttempt: verboseAttempts(config, deps),
  });
}

/**
 * A network failure of the `cas serve` found through server.json, once that file names a live server
 * at another address: a restart on another port (`--port 0`). Retrying the old port only kept the
 * caller from following it (`followed-connection.ts`, `findMovedServer`): an import waited out the
 * client's five attempts, 7.5-15 s, while server.json already named the new one (found by probing).
 * A file that is missing or names this address keeps the retries, which outlast a restart in place.
 */
function movedElsewhere(dataDir: string, endpoint: string): (error: ClientError) => boolean {
  return (error) => {
    if (!(error instanceof NetworkError)) return false;
    const state = inspectServerFile(dataDir);
    return state.kind === 'valid' && state.file.url !== endpoint && processAlive(state.file.pid);
  };
}

/** cli.md: `-v` shows requests and retries on stderr, one line each. */
function verboseAttempts(config: Config, deps: ConnectDeps): ((info: AttemptInfo) => void) | undefined {
  return config.verbose ? (info) => deps.log(attemptLine(info)) : undefined;
}

function ownerOf(path: string): number | undefined {
  try {
    return statSync(path).uid;
  } catch {
    return undefined;
  }
}

/**
 * A process that ended but was not reaped yet (a zombie, state Z on Linux) still takes signal 0: a
 * run after a `kill -9` took its import's spill folder for a live run's and left it behind (found by
 * probing). Where there is no /proc, the signal alone decides.
 */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) S ...": the name may hold spaces and parentheses; the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !zombie(pid);
  } catch (error) {
    // EPERM: alive but someone else's. Not proof of anything: the health challenge decides.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How long a `cas serve` has to answer the challenge before it is passed over (and left alone). */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Why a `server.json` was not used, said once per command even though connect() looks again while it
 * waits for the data directory's lock.
 */
type Say = (line: string) => void;

/** What the last look at `server.json` found: a `cas serve` that proved nothing yet, being busy. */
interface Seen {
  busy?: { url: string; why: string } | undefined;
}

/**
 * Whether the process listening at `file.url` is the `cas serve` that wrote `file`: it must answer
 * a fresh challenge with an HMAC under the file's secret. Nothing else is sent before it has.
 */
async function provesIdentity(
  file: ServerFile,
  where: string,
  say: Say,
  dataDir: string,
  seen: Seen,
): Promise<boolean> {
  const challenge = randomToken();
  const result = await probeHealth(file.url, challenge, PROBE_TIMEOUT_MS);
  if (result.kind === 'timeout') {
    // Maybe a real server under load: leave its file; the lock decides what happens next.
    say(`cas: ignoring ${where}: ${file.url} did not answer within ${PROBE_TIMEOUT_MS / 1000} s`);
    return false;
  }
  const full = busy(result);
  seen.busy = full === undefined ? undefined : { url: file.url, why: full };
  if (full !== undefined) {
    // A server at its connection or rate limits is no stranger: its file stays, and connect() asks
    // again while it waits for the lock. Removing it left the directory unusable while it ran.
    say(`cas: ${file.url} (${where}) is busy (${full}); asked again while it holds the data directory`);
    return false;
  }
  const proof =
    result.kind === 'answered' && result.body !== null && typeof result.body === 'object'
      ? (result.body as Record<string, unknown>).proof
      : undefined;
  if (proofMatches(file.secret, challenge, dataDirIdentity(dataDir), proof)) return true;
  const what =
    result.kind === 'unreachable'
      ? `nothing answers at ${file.url} (${result.reason})`
      : `the process at ${file.url} could not prove it is the cas serve that wrote it`;
  say(`cas: ignoring ${where}: ${what}; removed it, no credentials were sent`);
  removeStaleServerFile(dataDir, { secret: file.secret });
  return false;
}

/**
 * Why an answer says the server is busy, not that it is someone else: a refusal of our limits (503
 * at the connection cap, 429, 408), or the socket closed on a request it never read (the cap's 503
 * written first can be lost with it). Nothing listening (ECONNREFUSED) is not busy.
 */
function busy(result: ProbeResult): string | undefined {
  if (result.kind === 'answered')
    return [408, 429, 503].includes(result.status) ? String(result.status) : undefined;
  if (result.kind === 'unreachable' && /ECONNRESET|EPIPE|socket hang up/i.test(result.reason))
    return result.reason;
  return undefined;
}

/**
 * The `cas serve` holding the data directory now, without falling back to an embedded service: for
 * a command following a server that went away (`cas tail`), which must not take the directory.
 */
export async function findRunningServer(config: Config, deps: ConnectDeps): Promise<Connection | undefined> {
  if (config.endpoint !== undefined) return undefined;
  return findLocalServer(config, deps, deps.log, {});
}

/**
 * The `cas serve` holding the data directory now, when it is not the one at `endpoint`, which a
 * command found through server.json and lost: restarted, it listens on another port (`--port 0`).
 * For `cas tail` and `cas import`, which follow it there.
 */
export async function findMovedServer(
  config: Config,
  deps: ConnectDeps,
  endpoint: string,
): Promise<Connection | undefined> {
  const next = await findRunningServer(config, deps);
  if (next?.client.endpoint !== endpoint) return next;
  await next.close();
  return undefined;
}

/** A `cas serve` over this data directory that proves it is one, if there is one. */
async function findLocalServer(
  config: Config,
  deps: ConnectDeps,
  say: Say,
  seen: Seen,
): Promise<Connection | undefined> {
  seen.busy = undefined;
  const where = serverFilePath(config.dataDir);
  const state = inspectServerFile(config.dataDir);
  if (state.kind === 'none') return undefined;
  if (state.kind === 'invalid') {
    if (state.pid === undefined || !processAlive(state.pid)) {
      removeStaleServerFile(config.dataDir, {});
      if (config.verbose) say(`cas: removed ${where}: ${state.reason}`);
    } else {
      say(`cas: ignoring ${where}: ${state.reason}`);
    }
    return undefined;
  }
  const { file } = state;
  const owner = ownerOf(where);
  const me = process.getuid?.();
  if (me !== undefined && owner !== undefined && owner !== me) {
    // Another user could write this file in a directory they made (a shared /tmp path), naming a
    // server of theirs with a secret they chose: its proof proves nothing, and the key would be theirs.
    say(
      `cas: ignoring ${where}: it belongs to user ${owner}, not to you; nothing was sent to the server it names`,
    );
    return undefined;
  }
  if (!processAlive(file.pid)) {
    // The server died without cleaning up (kill -9, out of memory): the usual stale file.
    removeStaleServerFile(config.dataDir, { secret: file.secret });
    if (config.verbose) say(`cas: removed ${where}: process ${file.pid} is gone`);
    return undefined;
  }
  if (!isLoopbackUrl(file.url)) {
    say(`cas: ignoring ${where}: ${file.url} is not a loopback address; the local key goes nowhere else`);
    return undefined;
  }
  const credentials = readCredentials(config.dataDir);
  if (!credentials || !(await provesIdentity(file, where, say, config.dataDir, seen))) return undefined;
  const apiKey = config.apiKey ?? credentials.api_key;
  const projectId = config.projectId ?? credentials.project_id;
  const real = clientFor(config, file.url, apiKey, projectId, deps, 'server.json');
  return { client: real, mode: 'local-server', close: () => real.close() };
}

/**
 * cli.md "Where it sends data": a configured endpoint; else a `cas serve` already holding the data
 * directory; else the same service started in-process on a loopback port. Every path ends in the one
 * HTTP client, so commands cannot tell the difference.
 */
const ANOTHER = 'give another --data-dir (or CAS_DATA_DIR)';

/** How long a command waits for a data directory another process holds (no `cas serve` answering busy). */
export const LOCK_WAIT_MS = 10_000;

/** How long such a wait goes on before it is said, once: a command finishing beside it takes less. */
export const LOCK_NOTE_AFTER_MS = 1_000;

/** What a command waiting for its data directory says, once (`cas serve` too). */
export const lockWaitNote = (dataDir: string): string =>
  `waiting for ${dataDir}: another cas command is using it (up to ${LOCK_WAIT_MS / 1000} s)`;

/**
 * A data directory that cannot be one, said as a usage error: each failed deep inside as "this is a
 * bug" (a file: ENOTDIR on server.json; under a file; a link to nothing: ENOENT from mkdir), and one
 * under /proc, where Node's recursive mkdir never returns, spun for good (found by probing).
 */
export function refuseUnusableDataDir(dataDir: string): void {
  const absolute = resolve(dataDir);
  if (absolute === '/proc' || absolute.startsWith('/proc/')) {
    throw new UsageError(
      `the data directory "${dataDir}" is under /proc, which holds no files but the kernel's`,
      ANOTHER,
    );
  }
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dataDir).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') {
      throw new UsageError(`the data directory "${dataDir}" is under a file, not a directory`, ANOTHER);
    }
    if (code === 'ENOENT' && isLink(dataDir)) {
      throw new UsageError(
        `the data directory "${dataDir}" is a link to "${readlinkSync(dataDir)}", which is not there`,
        `${ANOTHER}, or make the link's target (an unmounted drive?)`,
      );
    }
    return; // Not there yet (made on first use), or not readable: opening it says which.
  }
  if (!isDirectory)
    throw new UsageError(
      `the data directory "${dataDir}" is a file, not a directory`,
      `${ANOTHER}, or move the file away`,
    );
  // Its own entries of the wrong kind failed deep inside as "this is a bug" (EEXIST from mkdir,
  // EISDIR from a rename or rm: found by probing).
  for (const [name, folder] of OWN_ENTRIES) {
    const path = join(dataDir, name);
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      continue;
    }
    if (isFolder !== folder) {
      const [is, want] = folder ? ['a file', 'a folder'] : ['a folder', 'a file'];
      throw new UsageError(`${path} is ${is}, where cas keeps ${want}`, `move it away (cas makes it again)`);
    }
  }
}

/** What cas keeps in a data directory beside DuckDB's files, and whether each is a folder. */
const OWN_ENTRIES = [
  ['imports', true],
  ['credentials.json', false],
  ['server.json', false],
] as const;

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

export async function connect(config: Config, deps: ConnectDeps): Promise<Connection> {
  if (deps.prices !== undefined) await checkPriceFile(deps.prices);
  if (config.endpoint !== undefined) {
    if (config.apiKey === undefined)
      throw new UsageError(
        '--api-key (or CAS_API_KEY / MLSDK_API_KEY) is required with an endpoint (--endpoint, CAS_ENDPOINT or MLSDK_SERVER_BASE)',
      );
    if (config.projectId === undefined) {
      throw new UsageError(
        '--project (or CAS_PROJECT_ID / MLSDK_PROJECT_ID) is required with an endpoint (--endpoint, CAS_ENDPOINT or MLSDK_SERVER_BASE)',
      );
    }
    refusePrices(deps, `the service at ${withoutPassword(config.endpoint)}`);
    const client = clientFor(config, config.endpoint, config.apiKey, config.projectId, deps, false);
    return { client, mode: 'remote', close: () => client.close() };
  }
  refuseUnusableDataDir(config.dataDir);
  const said = new Set<string>();
  const say: Say = (line) => {
    if (!said.has(line)) deps.log(line);
    said.add(line);
  };
  // Another short-lived CLI process may hold the lock for a moment; wait a little before giving up.
  // A busy `cas serve` is asked again for --retry-time, as the client retries its 503s and 429s.
  const started = Date.now();
  const seen: Seen = {};
  for (;;) {
    const local = await findLocalServer(config, deps, say, seen);
    if (local) {
      if (deps.prices !== undefined) await local.close();
      refusePrices(deps, 'the cas serve running over this data directory');
      return local;
    }
    try {
      // Loaded only here: a remote endpoint never pays for fastify and DuckDB.
      const { startEmbeddedService } = await import('../service/embedded.js');
      const service = await startEmbeddedService({
        dataDir: config.dataDir,
        log: deps.log,
        // The service's own diagnostics (a failed COMMIT, each storage failure) are -v's: the error
        // that reaches the command says what happened, in one line.
        diagnostics: config.verbose ? deps.log : () => undefined,
        prices: deps.prices,
        workload: deps.workload,
        thread: deps.thread,
        holdsProcess: deps.holdsProcess,
      });
      const apiKey = config.apiKey ?? service.apiKey;
      const projectId = config.projectId ?? service.projectId;
      const client = clientFor(config, service.url, apiKey, projectId, deps, 'embedded');
      return {
        client,
        mode: 'embedded',
        // Only `cas import` sends through it, and what it sends is history.
        postQueue: localQueueSender(
          service.queue,
          { apiKey, projectId },
          { history: true, built: true, onAttempt: verboseAttempts(config, deps) },
        ),
        close: async () => {
          await client.close();
          await service.close();
        },
      };
    } catch (error) {
      if (!(error instanceof DataDirLockedError)) throw error;
      const busy = seen.busy;
      const waited = Date.now() - started;
      if (busy !== undefined && waited > config.retryTimeMs)
        throw new ServerBusyError(busy.url, config.dataDir, busy.why, waited);
      if (busy === undefined && waited > LOCK_WAIT_MS) throw error;
      // A wait of up to 10 s said nothing, and looked like a hang (probe: a second import beside a first).
      if (busy === undefined && waited >= LOCK_NOTE_AFTER_MS) say(`cas: ${lockWaitNote(config.dataDir)}`);
      // A command interrupted while it waits stops now: it waited the rest out, then exit 5 (found by probing).
      await pauseUnlessAborted(250, deps.signal);
    }
  }
}

/** Waits `ms` and then throws the abort's reason if `signal` aborted meanwhile (or had already). */
export async function pauseUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  // An abort ends the pause early with an AbortError; the signal's own reason is thrown instead.
  await sleep(ms, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
  signal?.throwIfAborted();
}
