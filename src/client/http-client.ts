import { setMaxListeners } from 'node:events';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { issuesFromZod, summarizeIssues } from '../shared/errors.js';
import { isLoopbackUrl } from '../shared/loopback-url.js';
import type { ProxySettings } from '../shared/proxy-settings.js';
import { oneLine, parseErrorBody, parseRetryAfter } from './error-body.js';
import {
  ClientError,
  HttpError,
  isWasmMemoryFailure,
  NetworkError,
  type RequestTarget,
  ResponseValidationError,
  TimeoutError,
} from './errors.js';
import { DEFAULT_BACKOFF, type RetryInfo, type RetryPolicy, TLS_REFUSALS, withRetries } from './retry.js';
import { newAgent, newProxyAgent, request as undiciRequest } from './undici-parts.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/**
 * Scalars travel as text; objects, arrays and null as one parameter of compact JSON (decisions §1),
 * so `chartControls` needs no bracket encoding; undefined is left out.
 */
export type QueryValue = unknown;

export interface ClientOptions {
  /** Base URL; route paths such as `/bc/v1/user/identify` are appended to it. */
  endpoint: string;
  apiKey: string;
  projectId: string;
  /** Per attempt, whole response body included. 0 disables it. Default 30 000. */
  timeoutMs?: number;
  /** Attempts in total, the first included. Default 5. */
  retries?: number;
  /** Retries may start only within this many ms of the first attempt. Default 60 000. */
  retryTimeMs?: number;
  onRetry?: (info: RetryInfo) => void;
  /** Told of every attempt's outcome (`-v`): the status, or how it failed without one. */
  onAttempt?: ((info: AttemptInfo) => void) | undefined;
  userAgent?: string;
  /** A caller-owned dispatcher (tests); otherwise the client owns one keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** The proxy to go through (shared/proxy-settings.ts); never for a loopback endpoint, our own service. */
  proxy?: ProxySettings | undefined;
  /** Source of jitter in [0, 1); replaceable so tests can pin the backoff. */
  random?: () => number;
  /**
   * Failures not worth another attempt with this service, though their status is one to retry: the
   * CLI's own service over the data directory answering that its storage is full or read-only, which
   * no wait of seconds mends.
   */
  final?: (error: ClientError) => boolean;
}

export interface RequestOptions {
  method: HttpMethod;
  path: string;
  query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON when present. */
  body?: unknown;
  signal?: AbortSignal;
  /** Whether a repeat is harmless. Default true: our POSTs are deduplicated by event_id. */
  idempotent?: boolean;
  /** At most this many attempts (the client's own retries cap it): for a caller that retries itself. */
  attempts?: number;
}

export interface Client {
  readonly endpoint: string;
  /** The proxy settings requests go by, for the live socket to take the same route. */
  readonly proxy?: ProxySettings | undefined;
  request<T>(options: RequestOptions & { schema: z.ZodType<T> }): Promise<T>;
  request(options: RequestOptions): Promise<unknown>;
  /** Closes the client's own connections; a caller-supplied dispatcher is left to its owner. */
  close(): Promise<void>;
}

/** One attempt as `-v` reports it; the path carries no secret (the key travels in a header). */
export interface AttemptInfo {
  method: string;
  path: string;
  attempt: number;
  /** The HTTP status, or -1 when no answer came (network error, timeout). */
  status: number;
  ms: number;
  /** Why an attempt failed, in one line; absent for a 2xx. */
  failure?: string;
}

interface Prepared {
  target: RequestTarget;
  url: string;
  body: string | null;
  schema: z.ZodType | undefined;
}

/** Error bodies are read only this far: enough for any real message, never a memory hazard. */
const ERROR_BODY_BYTES = 64 * 1024;
/**
 * Connections per origin; more requests wait in the client for one. Uncapped, a library Client with
 * 1,500 sessions (a send worker each) opened as many connections, past its own service's 100 per
 * address: 503s retried together, and events were lost once their attempts ran out (found by
 * probing). `cas import --concurrency` goes up to 64, one connection a lane.
 */
const MAX_CONNECTIONS = 64;

export function createClient(options: ClientOptions): Client {
  const base = parseEndpoint(options.endpoint);
  headerSafe('apiKey', options.apiKey);
  headerSafe('projectId', options.projectId);
  const timeoutMs = nonNegative('timeoutMs', options.timeoutMs ?? 30_000);
  const policy: RetryPolicy = {
    retries: Math.max(1, Math.floor(nonNegative('retries', options.retries ?? 5))),
    retryTimeMs: nonNegative('retryTimeMs', options.retryTimeMs ?? 60_000),
    ...DEFAULT_BACKOFF,
    retryAfterJitterMs: 100,
    random: options.random ?? Math.random,
    final: options.final,
  };
  const ownsDispatcher = options.dispatcher === undefined;
  const agent = { keepAliveTimeout: 10_000, connections: MAX_CONNECTIONS };
  const proxy = options.proxy;
  const dispatcher: Dispatcher =
    options.dispatcher ??
    (proxy === undefined || isLoopbackUrl(base)
      ? newAgent(agent)
      : newProxyAgent({
          ...agent,
          httpProxy: proxy.http ?? '',
          // Without one of its own, undici sends https:// through the HTTP proxy (curl would go direct).
          httpsProxy: proxy.https ?? '',
          noProxy: proxy.noProxy ?? '',
        }));
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    'x-app-id': options.projectId,
    accept: 'application/json',
    'user-agent': options.userAgent ?? 'cas',
  };

  /** One attempt, told to `onAttempt`; URL and body are prepared once by `request`, not per retry. */
  async function once(
    prepared: Prepared,
    signal: AbortSignal | undefined,
    attempt: number,
  ): Promise<unknown> {
    const started = performance.now();
    const answered = { status: -1 };
    const report = (failure?: string): void => {
      if (options.onAttempt === undefined) return;
      const { method, path } = prepared.target;
      const ms = Math.round(performance.now() - started);
      const info: AttemptInfo = { method, path, attempt, status: answered.status, ms };
      options.onAttempt(failure === undefined ? info : { ...info, failure });
    };
    try {
      const value = await exchange(prepared, signal, answered);
      report();
      return value;
    } catch (error) {
      report(error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  /** Sets `answered.status` as soon as a status line arrives. */
  async function exchange(
    prepared: Prepared,
    signal: AbortSignal | undefined,
    answered: { status: number },
  ): Promise<unknown> {
    const { target, url, body, schema } = prepared;
    if (signal?.aborted) throw signal.reason;
    const controller = new AbortController();
    let timedOut = false;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, timeoutMs)
        : undefined;
    const forwardAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const res = await undiciRequest(url, {
        method: target.method,
        headers: body === null ? headers : { ...headers, 'content-type': 'application/json' },
        body,
        dispatcher,
        signal: controller.signal,
      });
      answered.status = res.statusCode;
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const text = await readCapped(res.body, ERROR_BODY_BYTES);
        const parsed = parseErrorBody(res.statusCode, text);
        const retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
        // Redirects are not followed (a key must not travel to where they point): say where, so an
        // http → https move can be acted on; it read "HTTP 301 Moved Permanently" (found by probing).
        const location = res.statusCode >= 300 && res.statusCode < 400 ? res.headers.location : undefined;
        if (typeof location === 'string' && URL.canParse(location, url)) {
          const to = new URL(location, url);
          parsed.message = `the service redirects to ${to.href.slice(0, 300)}, which is not followed: use ${endpointOf(to, target.path)} as the endpoint (${parsed.message})`;
        }
        throw new HttpError({ status: res.statusCode, ...parsed, retryAfterMs }, target);
      }
      return decode(res.statusCode, await res.body.text(), schema, target);
    } catch (error) {
      if (error instanceof ClientError) throw error;
      // undici refusing our own arguments is a bug to surface, not a network fault to retry.
      if (errorCode(error) === 'UND_ERR_INVALID_ARG') throw error;
      // No memory for undici's WebAssembly parser (`ulimit -v`): this machine's limit, which no retry
      // of the request mends; it read "cannot reach …" after five attempts (found by probing).
      if (isWasmMemoryFailure(error)) throw error;
      if (timedOut) throw new TimeoutError(timeoutMs, target, error);
      if (signal?.aborted) throw signal.reason;
      throw toNetworkError(error, base, target);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }

  function request<T>(req: RequestOptions & { schema: z.ZodType<T> }): Promise<T>;
  function request(req: RequestOptions): Promise<unknown>;
  function request(req: RequestOptions & { schema?: z.ZodType }): Promise<unknown> {
    const prepared: Prepared = {
      target: { method: req.method, path: req.path },
      url: `${base}${req.path}${queryString(req.query)}`,
      body: req.body === undefined ? null : JSON.stringify(req.body),
      schema: req.schema,
    };
    const capped =
      req.attempts === undefined
        ? policy
        : { ...policy, retries: Math.min(policy.retries, Math.max(1, req.attempts)) };
    return withRetries((attempt) => once(prepared, req.signal, attempt), {
      policy: capped,
      idempotent: req.idempotent ?? true,
      signal: req.signal,
      onRetry: options.onRetry,
      stop: closing.signal,
    });
  }

  // A closed client's requests waiting to try again fail at once, with their last error: a caller
  // that let go of the client (the library, after a `cas serve` moved) then finds the new one
  // without first sleeping through the old one's backoff (a live socket did, up to ~7 s).
  const closing = new AbortController();
  // Every request waiting to try again listens on it: past Node's default of 10, an app whose many
  // sessions were throttled at once got a MaxListenersExceededWarning in its output (found by probing).
  setMaxListeners(Number.POSITIVE_INFINITY, closing.signal);
  let closed: Promise<void> | undefined;
  return {
    endpoint: base,
    proxy,
    request,
    // Once: a second close() (a caller and its owner both closing) waits for the first.
    close: () => {
      closing.abort();
      closed ??= ownsDispatcher ? dispatcher.close() : Promise.resolve();
      return closed;
    },
  };
}

function parseEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TypeError(`endpoint is not a URL: ${oneLine(endpoint, 100)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`endpoint must be http or https, not ${url.protocol}`);
  }
  // Userinfo is dropped on purpose: credentials travel only in the Authorization header. Routes
  // carry `/bc/v1` themselves; an endpoint copied with it (the API's docs show full URLs) would
  // otherwise double it and get 404 on every call.
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/bc\/v1$/i, '')}`;
}

/** A control character in a header value would be rejected by undici on every attempt; say so up front. */
function headerSafe(name: string, value: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new TypeError(`${name} contains control characters`);
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number >= 0`);
  return value;
}

/** encodeURIComponent, not URLSearchParams: `%20` for spaces reads the same to every server. */
export function queryString(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const text = queryText(key, value);
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

function queryText(key: string, value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      return JSON.stringify(value);
    default:
      throw new TypeError(`query parameter ${key} cannot be sent as ${typeof value}`);
  }
}

async function readCapped(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early destroys the stream, so a huge error page is never read to the end.
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) break;
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

function decode(status: number, text: string, schema: z.ZodType | undefined, target: RequestTarget): unknown {
  let value: unknown;
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      const message = `${target.method} ${target.path} answered ${status} with a body that is not JSON: ${oneLine(text, 80)}`;
      throw new ResponseValidationError(status, message, [], target);
    }
  }
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // "Invalid input: expected object, received undefined" said nothing of an empty body (found by probing).
  if (value === undefined) {
    const message = `${target.method} ${target.path} answered ${status} with an empty body`;
    throw new ResponseValidationError(status, message, [], target);
  }
  const issues = issuesFromZod(result.error);
  const message = `unexpected response to ${target.method} ${target.path}: ${summarizeIssues(issues)}`;
  throw new ResponseValidationError(status, message, issues, target);
}

/**
 * The endpoint a redirect of `path` points at: the part of its URL before the path. Its whole URL was
 * given as the endpoint to use, which then asked for the path twice (found by probing).
 */
function endpointOf(to: URL, path: string): string {
  const at = to.pathname.lastIndexOf(path);
  return (at === -1 ? to.origin : `${to.origin}${to.pathname.slice(0, at)}`).slice(0, 300);
}

/** What to do about a TLS failure that no retry mends (retry.ts TLS_REFUSALS). */
function tlsHint(code: string | undefined): string {
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER') return '; the endpoint answers plain HTTP: give it as http://';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return "; the certificate is another host's";
  if (code !== undefined && TLS_REFUSALS.has(code))
    return "; the service's certificate is not trusted: give its CA certificate in NODE_EXTRA_CA_CERTS";
  return '';
}

function toNetworkError(error: unknown, base: string, target: RequestTarget): NetworkError {
  const code = errorCode(error);
  let detail = error instanceof Error ? error.message : String(error);
  // Node's happy-eyeballs connect reports an AggregateError with an empty message.
  if (!detail && error instanceof AggregateError) {
    const first: unknown = error.errors[0];
    detail = first instanceof Error ? first.message : '';
  }
  // OpenSSL's own text ("804C…:error:0A00010B:SSL routines:…:wrong version number:../deps/…") says
  // nothing a person needs beyond its reason.
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER') detail = 'wrong version number (TLS)';
  const origin = new URL(base).origin;
  return new NetworkError(
    `cannot reach ${origin}: ${oneLine(detail || code || 'connection failed')}${tlsHint(code)}`,
    code,
    target,
    error,
  );
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
