import { existsSync, rmSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { basename } from 'node:path';
import { LIMITS, type Limits } from '../shared/limits.js';
import type { LiveLimits } from '../shared/live-events.js';
import type { LocalAnswer, LocalQueue } from '../shared/local-queue.js';
import { READ_LIMITS, type ReadLimits } from '../shared/read-limits.js';
import { VERSION } from '../shared/version.js';
import { installIntentRules } from './analysis/intent-rules.js';
import { LexicalAnalyser } from './analysis/lexical-analyser.js';
import {
  type Credentials,
  databasePath,
  ensureDataDir,
  LOCAL_PROJECT_PREFIX,
  loadOrCreateCredentials,
  protectDataFiles,
  renewCredentials,
} from './data-dir.js';
import { HandlersInFlight } from './handlers-in-flight.js';
import { RateLimiter } from './http/rate-limit.js';
import { buildServer } from './http/server.js';
import { setActivePrices } from './ingest/costs.js';
import type { IngestStats } from './ingest/ingest-stats.js';
import { Ingestor } from './ingest/ingestor.js';
import { localQueue } from './ingest/local-queue.js';
import { PriceTable, readPriceFile } from './ingest/price-table.js';
import { liveEvents } from './live/install.js';
import { classifyDataDirError, DataDirError, DataDirLockedError } from './lock-error.js';
import { allRoutes } from './routes/index.js';
import { dataDirIdentity } from './server-identity.js';
import { type Database, openDatabase } from './store/database.js';
import { tooFewOpenFiles } from './store/open-files.js';
import { Tenants } from './store/tenants.js';
import { checkWal } from './store/wal-check.js';

export { DataDirError, DataDirLockedError };

export interface ServiceOptions {
  dataDir: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Extra key/project to provision (idempotent), as `cas serve --api-key --project` asks. */
  provision?: { apiKey: string; projectId: string };
  limits?: Partial<Limits>;
  log?: (line: string) => void;
  /**
   * Lines for whoever runs the service (internal errors, storage failures, a failed COMMIT retried
   * request by request, live-event faults); `log` when absent. An embedded service's go to `-v` only:
   * cli.md has an error be one line on stderr, and a full disk printed dozens (found by probing).
   */
  diagnostics?: (line: string) => void;
  /** `cas serve`'s per-run secret from server.json, proved on /healthz (server-identity.ts). */
  serverSecret?: string;
  /** User-defined intents (`cas serve --intents <file>`): the file's parsed JSON, stored for the served project. */
  intents?: { value: unknown; source: string };
  /** DuckDB's memory limit: the embedded service's (embedded.ts) or `cas serve --memory-limit`. */
  memoryLimit?: string;
  /** How far DuckDB's memory may grow when a write runs out (store/database.ts): the embedded service's. */
  memoryCeiling?: string;
  /** A price file merged over the built-in table (`--prices`, price-table.ts); the built-in table alone when absent. */
  prices?: string | undefined;
  /** Reader pool, query time and response-size budgets (`cas serve` flags); READ_LIMITS when absent. */
  reads?: Partial<ReadLimits>;
  /** `cas serve --ws-port`: a second listener for live-event sockets only (the SDKs' :300x -> :400x rule). */
  wsPort?: number;
  /** Live sockets' buffer and count bounds; LIVE_LIMITS when absent. */
  live?: Partial<LiveLimits>;
  /**
   * false: the listening socket and its connections do not keep the process alive (the client
   * library's embedded service: an app that ends without `close()` still exits, its pending events
   * flushed on `beforeExit` first). A request in flight keeps it alive through its client's socket.
   */
  holdsProcess?: boolean;
}

export interface RunningService {
  url: string;
  port: number;
  dataDir: string;
  /** The data directory's own key and project. */
  local: Credentials;
  db: Database;
  tenants: Tenants;
  /** Where ingest time goes (the ingest benchmark prints it). */
  ingestStats: IngestStats;
  /** The `--ws-port` listener's address, when there is one. */
  wsUrl?: string;
  /** Open live-event sockets. */
  liveSockets(): number;
  /** The queue route without HTTP, for the embedded service's own process (local-queue.ts). */
  localQueue: LocalQueue;
  /** Loads a project's ingest cache while no request waits (Ingestor.warm); close() waits for it. */
  warmIngest(projectId: string): Promise<void>;
  /** Stops accepting, lets in-flight requests finish, then closes the database cleanly. */
  close(): Promise<void>;
}

async function open(
  dataDir: string,
  memory: Pick<ServiceOptions, 'memoryLimit' | 'memoryCeiling'>,
  reads: ReadLimits,
): Promise<Database> {
  const path = databasePath(dataDir);
  const fresh = !existsSync(path);
  try {
    const files = tooFewOpenFiles();
    if (files !== undefined) throw new DataDirError('files', dataDir, files);
    // DuckDB would silently skip a WAL it cannot parse, acknowledged transactions included.
    const wal = checkWal(`${path}.wal`);
    if (!wal.ok) throw new DataDirError('damaged', dataDir, `${basename(path)}.wal: ${wal.reason}`);
    const readPool = { connections: reads.readConnections, timeoutMs: reads.queryTimeoutMs };
    return await openDatabase(path, {
      readPool,
      ...(memory.memoryLimit === undefined ? {} : { memoryLimit: memory.memoryLimit }),
      ...(memory.memoryCeiling === undefined ? {} : { memoryCeiling: memory.memoryCeiling }),
    });
  } catch (error) {
    const problem = classifyDataDirError(error, dataDir);
    // A store the full disk cut short at its creation: left behind, it was "damaged" (exit 9) once
    // space was freed (found by probing). Not when locked: then another process made the file.
    if (fresh && problem instanceof DataDirError && problem.problem === 'full') {
      for (const file of [path, `${path}.wal`]) rmSync(file, { force: true });
    }
    throw problem ?? error;
  }
}

/** What fastify answers a request that arrives once close() began (return503OnClosing). */
const SHUTTING_DOWN: LocalAnswer = {
  status: 503,
  body: { status: 503, code: 'unavailable', message: 'the service is shutting down' },
};

export async function startService(options: ServiceOptions): Promise<RunningService> {
  // Before the database opens: a bad price file is the caller's to fix, and nothing was started.
  const builtIn = PriceTable.builtIn();
  setActivePrices(options.prices === undefined ? builtIn : builtIn.mergedWith(readPriceFile(options.prices)));
  ensureDataDir(options.dataDir);
  const reads: ReadLimits = { ...READ_LIMITS, ...options.reads };
  const db = await open(options.dataDir, options, reads);
  const files = protectDataFiles(options.dataDir);
  const limits: Limits = { ...LIMITS, ...options.limits };
  const log = options.log ?? (() => undefined);
  const diagnostics = options.diagnostics ?? log;
  try {
    const tenants = await Tenants.load(db);
    // Another store's file, provisioned anew, hid every stored event, exit 0 (found by probing).
    let local = loadOrCreateCredentials(
      options.dataDir,
      await tenants.oldestProject(LOCAL_PROJECT_PREFIX),
      log,
      (id) => tenants.hasProject(id),
    );
    if (tenants.isRevoked(local.api_key)) {
      // Provisioned again, the revoked key worked again, with its old secret (found by probing).
      local = renewCredentials(options.dataDir, local.project_id);
      log('the local key in credentials.json was revoked: a new one was made for its project');
    }
    await tenants.provision({ apiKey: local.api_key, projectId: local.project_id });
    if (options.provision) await tenants.provision(options.provision);
    if (options.intents) {
      await installIntentRules(db, options.provision?.projectId ?? local.project_id, options.intents);
    }
    const ingestor = new Ingestor(db, new LexicalAnalyser(), diagnostics);
    const live = liveEvents({ reader: db.read, log: diagnostics, limits: options.live, keys: tenants });
    ingestor.onCommitted = live.committed;

    const rateLimiter = new RateLimiter({
      ingestPerSecond: limits.ingestRatePerSecond,
      ingestBurst: limits.ingestBurst,
      chartPerSecond: limits.chartRatePerSecond,
      chartBurst: limits.chartBurst,
    });
    const handlers = new HandlersInFlight();
    const app = buildServer({
      tenants,
      routes: handlers.track(
        allRoutes({
          db,
          version: VERSION,
          ingestor,
          limits,
          reads,
          server:
            options.serverSecret === undefined
              ? undefined
              : { secret: options.serverSecret, dataDir: dataDirIdentity(options.dataDir) },
          live: live.route,
          tenants,
        }),
      ),
      bodyLimit: limits.bodyBytes,
      log: diagnostics,
      rateLimiter,
      limits,
    });
    live.install(app);
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
    if (options.holdsProcess === false) {
      app.server.unref();
      app.server.on('connection', (socket: Socket) => socket.unref());
    }
    const { port } = app.server.address() as AddressInfo;
    const host = options.host ?? '127.0.0.1';
    const urlHost = host.includes(':') ? `[${host}]` : host;
    const wsUrl =
      options.wsPort === undefined
        ? undefined
        : await live.listen(host, options.wsPort, limits).catch(async (error: unknown) => {
            await app.close();
            throw error;
          });
    let closing: Promise<void> | undefined;
    const queueLocally = handlers.trackCalls(localQueue(ingestor, tenants, limits, diagnostics));
    const warmLocally = handlers.trackCalls((projectId: string) =>
      ingestor.warm(projectId, () => closing !== undefined),
    );
    return {
      url: `http://${urlHost}:${port}`,
      port,
      dataDir: options.dataDir,
      local,
      db,
      tenants,
      ingestStats: ingestor.stats,
      ...(wsUrl === undefined ? {} : { wsUrl }),
      liveSockets: live.sockets,
      localQueue: (batch) => (closing ? Promise.resolve(SHUTTING_DOWN) : queueLocally(batch)),
      warmIngest: (projectId) => (closing ? Promise.resolve() : warmLocally(projectId)),
      close() {
        // Held while closing: exiting inside DuckDB's checkpoint would abort the process.
        app.server.ref();
        closing ??= app.close().then(async () => {
          await handlers.settled();
          ingestor.close();
          files.close();
          return db.close();
        });
        return closing;
      },
    };
  } catch (error) {
    files.close();
    await db.close();
    throw classifyDataDirError(error, options.dataDir) ?? error;
  }
}
