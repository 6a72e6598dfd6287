import type { Agent } from 'node:http';
import WebSocket from 'ws';
import {
  LIVE_CLOSE,
  LIVE_PING_MS,
  LIVE_SOCKET_PATH,
  type LiveFrame,
  liveFrameSchema,
} from '../shared/live-events.js';
import { proxyFor } from '../shared/proxy-settings.js';
import { HttpError, isClientError } from './errors.js';
import type { Client } from './http-client.js';
import { backoffDelay, type RetryPolicy, sleep } from './retry.js';
import { realtime } from './routes.js';

/**
 * The live-events socket of a service (issue 17), for `cas tail` and the client library's `onEvent`:
 * a key from `GET /bc/v1/live-events/realtime`, then a websocket at `/bc/v1/live-events/ws` of the
 * same endpoint. Reconnects with a fresh key after a dropped connection, a restart of the service or
 * a close for being slow, with exponential backoff and jitter; a session-scoped socket ends after its
 * session's `Session Ended`. Frames missed while disconnected are not replayed: callers that need
 * them read `live-events/events` after `onOpen` (commands/tail.ts does).
 */

export type LiveSocketErrorKind = 'refused' | 'unsupported' | 'network' | 'protocol';

/** Why the socket stopped for good, or why one attempt failed (passed to `onRetry`). */
export class LiveSocketError extends Error {
  constructor(
    readonly kind: LiveSocketErrorKind,
    message: string,
    /** The HTTP status of a refused key request or upgrade; -1 when none. */
    readonly status = -1,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'LiveSocketError';
  }
}

export type LiveSocketEnd =
  | { reason: 'session-ended' }
  | { reason: 'closed' }
  | { reason: 'failed'; error: LiveSocketError };

export interface LiveSocketOptions {
  /** The HTTP client of the service: its endpoint, key and project. */
  client: Client;
  /** Only this session's frames; the socket ends after its `Session Ended`. */
  sessionId?: string | undefined;
  onFrame(frame: LiveFrame): void;
  /** Each time a socket opens (again): events committed while none was open are not sent. */
  onOpen?: (() => void) | undefined;
  onRetry?: ((info: { attempt: number; delayMs: number; error: LiveSocketError }) => void) | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Asked after a network failure for the service's client now, if it may have moved (a `cas serve`
   * found through server.json that restarted on another port); undefined keeps the one there is.
   */
  refresh?: (() => Promise<Client | undefined>) | undefined;
  /**
   * The socket and its waits between attempts do not keep the process alive (the library's `onEvent`:
   * an app that ends without `close()` still exits); `cas tail`, which only listens, leaves this off.
   */
  unref?: boolean | undefined;
  /**
   * Attempts before a socket first opens: past them the service is taken as unable to give one
   * (`cas tail`: its --retries); default unlimited. Once one has opened, it is reconnected to for as
   * long as it is wanted.
   */
  firstOpenAttempts?: number | undefined;
  /** Time for an upgrade to be answered; one never answered held the attempt forever (found by probing). */
  openTimeoutMs?: number | undefined;
  /**
   * Silence after which an open socket counts as dropped and is opened again: the service pings
   * every LIVE_PING_MS, and a connection cut without a close (a sleeping laptop, a NAT that forgot
   * it) sends nothing at all. Default 2.5 pings.
   */
  silenceMs?: number | undefined;
  /** Backoff between attempts: 500 ms doubling to 8 s by default, with equal jitter. */
  backoff?: { baseDelayMs: number; maxDelayMs: number } | undefined;
  random?: (() => number) | undefined;
}

export interface LiveSocketHandle {
  /** Resolves once the socket stops for good. */
  done: Promise<LiveSocketEnd>;
  /** Stop delivering (backpressure reaches the service, which closes a reader that stays behind). */
  pause(): void;
  resume(): void;
  close(): void;
}

/**
 * `http(s)://host[/base]` → `ws(s)://host[/base]/bc/v1/live-events/ws`, or with `root`
 * `ws(s)://host[/base]/`, where the hosted SDKs derive the socket from the base URL (decisions §7).
 */
export function liveSocketUrl(endpoint: string, root = false): string {
  const url = new URL(endpoint);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${root ? '/' : LIVE_SOCKET_PATH}`;
  url.search = '';
  return url.toString();
}

/**
 * The CONNECT tunnel to the socket through the proxy the client's requests take (ws goes direct
 * otherwise: `cas tail` behind a proxy got its key over HTTP, then never opened the socket). Loaded
 * only when a proxy is in use.
 */
async function proxyAgent(client: Client): Promise<Agent | undefined> {
  const proxy = proxyFor(new URL(client.endpoint), client.proxy);
  if (proxy === undefined) return undefined;
  const { HttpsProxyAgent } = await import('https-proxy-agent');
  return new HttpsProxyAgent(proxy);
}

/** A failed key request as a socket error: 401/403/404 will not get better by retrying. */
function keyError(error: unknown): LiveSocketError {
  if (error instanceof HttpError) {
    if (error.status === 404) {
      return new LiveSocketError(
        'unsupported',
        'the service has no live events (GET /bc/v1/live-events/realtime: 404)',
        404,
      );
    }
    return new LiveSocketError(
      error.status < 500 && error.status !== 429 ? 'refused' : 'network',
      error.message,
      error.status,
    );
  }
  if (isClientError(error)) return new LiveSocketError('network', error.message, -1, { cause: error });
  throw error;
}

type Attempt = { ended: LiveSocketEnd } | { retry: LiveSocketError; opened: boolean };

export function openLiveSocket(options: LiveSocketOptions): LiveSocketHandle {
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abort, { once: true });
  const signal = controller.signal;
  let current: WebSocket | undefined;
  /** The open socket's silence timer, restarted on resume. */
  let heardOf: (() => void) | undefined;
  let paused = false;
  let client = options.client;
  /**
   * Our service takes the socket at both addresses (decisions §7), the hosted one at the base URL
   * only: an upgrade refused with 404 at ours is tried at the base URL from then on (found by probing).
   */
  let atRoot = false;
  const policy: RetryPolicy = {
    retries: Number.POSITIVE_INFINITY,
    retryTimeMs: Number.POSITIVE_INFINITY,
    baseDelayMs: options.backoff?.baseDelayMs ?? 500,
    maxDelayMs: options.backoff?.maxDelayMs ?? 8_000,
    retryAfterJitterMs: 0,
    random: options.random ?? Math.random,
  };

  /** One key and one socket, until it closes. */
  const attempt = async (): Promise<Attempt> => {
    let key: string;
    try {
      key = (await realtime(client, options.sessionId, { signal })).authorization_key;
    } catch (error) {
      if (signal.aborted) return { ended: { reason: 'closed' } };
      const failure = keyError(error);
      if (failure.kind === 'network') return { retry: failure, opened: false };
      return { ended: { reason: 'failed', error: failure } };
    }
    const agent = await proxyAgent(client);
    return new Promise<Attempt>((resolve) => {
      const ws = new WebSocket(liveSocketUrl(client.endpoint, atRoot), {
        headers: { authorization: `Bearer ${key}` },
        ...(agent === undefined ? {} : { agent }),
        maxPayload: 64 * 1024 * 1024,
        ...(options.openTimeoutMs === undefined ? {} : { handshakeTimeout: options.openTimeoutMs }),
      });
      current = ws;
      if (paused) ws.pause();
      let opened = false;
      let failure: LiveSocketError | undefined;
      const onAbort = () => ws.close(1000, 'closed by the client');
      signal.addEventListener('abort', onAbort, { once: true });
      const silenceMs = options.silenceMs ?? 2.5 * LIVE_PING_MS;
      let quiet: NodeJS.Timeout | undefined;
      // While paused the socket is not read, so the service's pings cannot be heard.
      const heard = (): void => {
        clearTimeout(quiet);
        if (!opened || ws.isPaused) return;
        quiet = setTimeout(() => {
          failure = new LiveSocketError('network', `the service sent nothing for ${silenceMs / 1000} s`);
          ws.terminate();
        }, silenceMs);
        quiet.unref();
      };
      heardOf = heard;
      if (options.unref) ws.once('upgrade', (res) => res.socket.unref());
      ws.on('open', () => {
        opened = true;
        heard();
        options.onOpen?.();
      });
      ws.on('ping', heard);
      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? -1;
        failure = new LiveSocketError('refused', `the service refused the socket (HTTP ${status})`, status);
        res.resume();
        ws.terminate();
      });
      ws.on('error', (error) => {
        failure ??= new LiveSocketError('network', error.message, -1, { cause: error });
      });
      ws.on('message', (data, isBinary) => {
        heard();
        if (isBinary) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(data.toString());
        } catch {
          return;
        }
        const frame = liveFrameSchema.safeParse(parsed);
        if (frame.success) options.onFrame(frame.data);
      });
      ws.on('close', (code, reason) => {
        clearTimeout(quiet);
        heardOf = undefined;
        signal.removeEventListener('abort', onAbort);
        current = undefined;
        if (signal.aborted) resolve({ ended: { reason: 'closed' } });
        else if (code === LIVE_CLOSE.normal && options.sessionId !== undefined) {
          resolve({ ended: { reason: 'session-ended' } });
        } else {
          const why = reason.toString() || failure?.message || `closed with code ${code}`;
          // An expired key (401 on upgrade) is one reason to get a fresh key, like a restart.
          resolve({ retry: failure ?? new LiveSocketError('network', why), opened });
        }
      });
    });
  };

  const run = async (): Promise<LiveSocketEnd> => {
    let failures = 0;
    let everOpened = false;
    try {
      for (;;) {
        if (signal.aborted) return { reason: 'closed' };
        const result = await attempt();
        if ('ended' in result) return result.ended;
        if (result.retry.kind === 'refused' && result.retry.status === 404 && !atRoot) {
          atRoot = true;
          continue;
        }
        everOpened ||= result.opened;
        failures = result.opened ? 1 : failures + 1;
        if (!everOpened && failures >= (options.firstOpenAttempts ?? Number.POSITIVE_INFINITY)) {
          return { reason: 'failed', error: result.retry };
        }
        const status = result.retry.status;
        if (result.retry.kind === 'refused' && status !== 401 && status !== 429 && status < 500) {
          return { reason: 'failed', error: result.retry };
        }
        const delayMs = backoffDelay(failures, policy);
        options.onRetry?.({ attempt: failures, delayMs, error: result.retry });
        await sleep(delayMs, signal, options.unref === true).catch(() => undefined);
        if (result.retry.kind === 'network' && options.refresh && !signal.aborted) {
          client = (await options.refresh().catch(() => undefined)) ?? client;
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  };

  return {
    done: run(),
    pause() {
      paused = true;
      current?.pause();
      heardOf?.();
    },
    resume() {
      paused = false;
      current?.resume();
      heardOf?.();
    },
    close: () => controller.abort(),
  };
}
