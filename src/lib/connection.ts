import { attemptLine, retryLine } from '../client/attempt-lines.js';
import { createClient, type Client as HttpClient } from '../client/http-client.js';
import type { ClientSettings } from './config.js';

/** Where a Client's requests go: always the one HTTP client of `src/client/`. */
export interface LibConnection {
  http: HttpClient;
  close(): Promise<void>;
  /** Made by connectLocal: let go when the app has nothing left to send (Client's beforeExit). */
  local?: true;
}

type Log = ((line: string) => void) | undefined;

/** A configured endpoint: made at once, so a bad URL or key is a TypeError from the constructor. */
export function connectRemote(settings: ClientSettings, log: Log): LibConnection {
  const http = createClient({
    endpoint: settings.endpoint ?? '',
    apiKey: settings.apiKey ?? '',
    projectId: settings.projectId ?? '',
    timeoutMs: settings.timeoutMs,
    retries: settings.retries,
    proxy: settings.proxy,
    userAgent: 'cas-client',
    // `debug`: the lines `-v` prints, as a local connection (commands/connect.ts) prints them too.
    ...(log ? { onRetry: (info) => log(retryLine(info)), onAttempt: (info) => log(attemptLine(info)) } : {}),
  });
  return { http, close: () => http.close() };
}

/**
 * No endpoint: what the CLI does (a `cas serve` already holding the data directory, else the service
 * embedded on a worker thread). Imported only here, so an app with an endpoint never loads the
 * service, fastify or DuckDB.
 */
export async function connectLocal(settings: ClientSettings, log: Log): Promise<LibConnection> {
  const { connect } = await import('../commands/connect.js');
  const connection = await connect(
    {
      endpoint: undefined,
      apiKey: settings.apiKey,
      projectId: settings.projectId,
      dataDir: settings.dataDir,
      profile: settings.profile,
      timeoutMs: settings.timeoutMs,
      retries: settings.retries,
      retryTimeMs: 60_000,
      verbose: settings.debug,
      quiet: !settings.debug,
    },
    // The app's own work keeps its process alive, not the service it started for it.
    { log: (line) => log?.(line), holdsProcess: false },
  );
  return { http: connection.client, close: () => connection.close(), local: true };
}
