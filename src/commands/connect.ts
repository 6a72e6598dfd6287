import { type Client, createClient } from '../client/http-client.js';
import type { RetryInfo } from '../client/retry.js';
import { health } from '../client/routes.js';
import { readCredentials, readServerFile } from '../service/data-dir.js';
import { DataDirLockedError } from '../service/lock-error.js';
import type { Config } from './config.js';
import { UsageError } from './errors.js';

export type ConnectionMode = 'remote' | 'local-server' | 'embedded';

export interface Connection {
  client: Client;
  mode: ConnectionMode;
  close(): Promise<void>;
}

export interface ConnectDeps {
  log: (line: string) => void;
}

function clientFor(
  config: Config,
  endpoint: string,
  apiKey: string,
  projectId: string,
  deps: ConnectDeps,
): Client {
  return createClient({
    endpoint,
    apiKey,
    projectId,
    timeoutMs: config.timeoutMs,
    retries: config.retries,
    retryTimeMs: config.retryTimeMs,
    onRetry: (info: RetryInfo) => {
      if (config.verbose) deps.log(`retry ${JSON.stringify(info)}`);
    },
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A `cas serve` over this data directory that answers its health check, if there is one. */
async function findLocalServer(config: Config, deps: ConnectDeps): Promise<Connection | undefined> {
  const server = readServerFile(config.dataDir);
  const credentials = readCredentials(config.dataDir);
  if (!server || !credentials || !processAlive(server.pid)) return undefined;
  const client = clientFor({ ...config, retries: 1, timeoutMs: 2_000 }, server.url, '', '', deps);
  try {
    await health(client);
  } catch {
    return undefined;
  } finally {
    await client.close();
  }
  const apiKey = config.apiKey ?? credentials.api_key;
  const projectId = config.projectId ?? credentials.project_id;
  const real = clientFor(config, server.url, apiKey, projectId, deps);
  return { client: real, mode: 'local-server', close: () => real.close() };
}

/**
 * cli.md "Where it sends data": a configured endpoint; else a `cas serve` already holding the data
 * directory; else the same service started in-process on a loopback port. Every path ends in the one
 * HTTP client, so commands cannot tell the difference.
 */
export async function connect(config: Config, deps: ConnectDeps): Promise<Connection> {
  if (config.endpoint !== undefined) {
    if (config.apiKey === undefined)
      throw new UsageError('--api-key (or CAS_API_KEY / MLSDK_API_KEY) is required with --endpoint');
    if (config.projectId === undefined) {
      throw new UsageError('--project (or CAS_PROJECT_ID / MLSDK_PROJECT_ID) is required with --endpoint');
    }
    const client = clientFor(config, config.endpoint, config.apiKey, config.projectId, deps);
    return { client, mode: 'remote', close: () => client.close() };
  }
  // Another short-lived CLI process may hold the lock for a moment; wait a little before giving up.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const local = await findLocalServer(config, deps);
    if (local) return local;
    try {
      // Loaded only here: a remote endpoint never pays for fastify and DuckDB.
      const { startEmbeddedService } = await import('../service/embedded.js');
      const service = await startEmbeddedService({ dataDir: config.dataDir, log: deps.log });
      const apiKey = config.apiKey ?? service.apiKey;
      const projectId = config.projectId ?? service.projectId;
      const client = clientFor(config, service.url, apiKey, projectId, deps);
      return {
        client,
        mode: 'embedded',
        close: async () => {
          await client.close();
          await service.close();
        },
      };
    } catch (error) {
      if (!(error instanceof DataDirLockedError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
