import type { IncomingMessage } from 'node:http';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { bracketObjects, unsafeQueryKey } from '../../shared/api-params.js';
import { type Issue, issuesFromZod } from '../../shared/errors.js';
import { routeErrorMap } from '../../shared/event-bodies.js';
import { FORBIDDEN_KEY_MESSAGE } from '../../shared/json-problem.js';
import { LIMITS, type Limits } from '../../shared/limits.js';
import { invalidInput, resourceFailure, SecretProbeError, ServiceError } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import { encodeRpcStatus, errorMessageOf } from '../otlp/status.js';
import type { Tenants } from '../store/tenants.js';
import { AnswerBudget } from './answer-budget.js';
import { authenticate, checkNamedTenant } from './auth.js';
import { BodyBudget, meteredBody } from './body-budget.js';
import { checkBodyType } from './body-type.js';
import { clientErrorHandler, frameworkErrorHandler } from './client-errors.js';
import { keepTimeoutsWhileClosing } from './closing-timeouts.js';
import { guardConnections } from './connection-guard.js';
import { gunzipBody } from './content-encoding.js';
import { sendError as send, toServiceError } from './error-reply.js';
import { parseJsonBody } from './json-body.js';
import { listenerTimeouts } from './listener-timeouts.js';
import { takeTurn } from './pipelined.js';
import { AuthFailureLimiter, type RateLimiter } from './rate-limit.js';
import { readRefusedBody } from './refused-body.js';
import type { RouteSpec } from './route.js';
import { scalarBrackets, scalarParameters } from './scalar-brackets.js';

export interface ServerOptions {
  tenants: Tenants;
  routes: ReadonlyArray<RouteSpec>;
  bodyLimit: number;
  /** Per-key token buckets; absent means unlimited (tests of other concerns). */
  rateLimiter?: RateLimiter;
  /** Where unexpected failures are reported: one line each, never a stack or a secret. */
  log: (line: string) => void;
  /** Timeouts, connection caps, the body budget and failed-auth limits; absent: LIMITS. */
  limits?: Limits;
}

declare module 'fastify' {
  interface FastifyRequest {
    tenant?: Scope;
    /** SHA-256 of the key that authenticated the request (the key routes mark it as `current`). */
    keyHash?: string;
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A request answered before its body arrived whole (refused without reading it: `readRefusedBody`). */
function bodyUnread(raw: IncomingMessage): boolean {
  return !raw.complete;
}

/**
 * A query parameter given more than once arrives as a list: its issue says so, where it read as the
 * wrong type (`limit=2&limit=3`: "must be a number", found by probing).
 */
function repeatedParameters(query: Record<string, unknown>, issues: Issue[]): Issue[] {
  return issues.map((issue) => {
    const value = Object.hasOwn(query, issue.path) ? query[issue.path] : undefined;
    return Array.isArray(value)
      ? { path: issue.path, message: `given ${value.length} times; give it once` }
      : issue;
  });
}

/** The bytes a request says it will send: its Content-Length; 0 with none (no body, or chunked). */
function declaredBodyBytes(request: FastifyRequest): number {
  const length = Number(request.headers['content-length']);
  return Number.isFinite(length) && length > 0 ? length : 0;
}

export function buildServer(options: ServerOptions): FastifyInstance {
  const limits = options.limits ?? { ...LIMITS };
  const timeouts = listenerTimeouts(limits);
  const app = Fastify({
    bodyLimit: options.bodyLimit,
    logger: false,
    return503OnClosing: true,
    // A client trickling its headers or body gets 408 and its socket closed (clientErrorHandler).
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    http: {
      requestTimeout: timeouts.requestTimeout,
      headersTimeout: timeouts.headersTimeout,
      connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
    },
    // Query strings like chartControls[range][start] stay flat keys; the chart routes read both forms.
    // A path parameter as long as the request line allows (16 KiB) is routed, so its key is checked
    // first and its schema names it: past 500 characters it was a 400 "could not be routed" before
    // any credentials were looked at (found by probing).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16 * 1024 },
    // Refusals before any route runs (bad HTTP, 16 KiB header overflow, bad percent-encoding) get
    // our error body too, not fastify's.
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
  });

  // Our own JSON parser names the path of a forbidden key; no other body type is accepted (415).
  app.removeAllContentTypeParsers();
  // Routes that take no body (DELETE, and a GET or POST without one): a client that sends its JSON
  // content type on every request, with no body, is not refused for the empty body (it was: 400).
  const bodyless = new Set(options.routes.filter((r) => !r.body).map((r) => `${r.method} ${r.url}`));
  const otlpRoutes = new Set(options.routes.filter((r) => r.otlp).map((r) => r.url));
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (
      (body as Buffer).length === 0 &&
      bodyless.has(`${request.method} ${request.routeOptions.url ?? ''}`)
    ) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      // Strict decoding: invalid UTF-8 is refused, never stored as U+FFFD.
      text = utf8.decode(body as Buffer);
    } catch {
      done(new ServiceError(400, 'invalid_input', 'request body is not valid UTF-8'), undefined);
      return;
    }
    try {
      // The trace receiver judges each span on its own, a lone surrogate included (otlp-spans.ts).
      const spans = otlpRoutes.has(request.routeOptions.url ?? '');
      done(null, parseJsonBody(text, (body as Buffer).length, { surrogates: !spans }));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // OTLP/HTTP's protobuf encoding, for the routes that take it (the trace receiver); elsewhere 415.
  const protobufRoutes = new Set(options.routes.filter((r) => r.otlp).map((r) => r.url));
  app.addContentTypeParser('application/x-protobuf', { parseAs: 'buffer' }, (request, body, done) => {
    if (protobufRoutes.has(request.routeOptions.url ?? '')) done(null, body);
    else
      done(
        new ServiceError(415, 'unsupported_media_type', 'request bodies must be application/json'),
        undefined,
      );
  });

  // Sockets that finish a request after close() began must not linger in keep-alive, or close()
  // would wait for their idle timeout; telling the client to close them lets shutdown complete.
  let closing = false;
  const whileClosing = keepTimeoutsWhileClosing(app.server, limits, timeouts.connectionsCheckingInterval);
  app.addHook('preClose', async () => {
    closing = true;
    whileClosing.closing();
  });
  const answers = new AnswerBudget(limits.answerBytesInFlight);
  app.addHook('onSend', async (request, reply, payload) => {
    answers.hold(request, reply, payload);
    if (closing || (bodyUnread(request.raw) && !readRefusedBody(request.raw))) {
      reply.header('connection', 'close');
    }
    // OTLP/HTTP: a protobuf request's error is a protobuf Status, in the request's content type.
    if (
      reply.statusCode >= 400 &&
      protobufRoutes.has(request.routeOptions.url ?? '') &&
      /^application\/x-protobuf\b/i.test(request.headers['content-type'] ?? '')
    ) {
      reply.type('application/x-protobuf');
      return encodeRpcStatus(reply.statusCode, errorMessageOf(payload));
    }
    return payload;
  });
  guardConnections(app.server, limits);

  const authFailures = new AuthFailureLimiter(limits.authFailureRatePerSecond, limits.authFailureBurst);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof SecretProbeError) authFailures.failed(request.ip);
    if (error instanceof ServiceError) return send(reply, error);
    const mapped = toServiceError(error);
    if (mapped) return send(reply, mapped);
    const storage = resourceFailure(error, options.log);
    if (storage) return send(reply, storage);
    options.log(`internal error: ${error.name}: ${error.message.split('\n')[0]}`);
    return send(reply, new ServiceError(500, 'internal', 'internal error; the service logged it'));
  });

  // hasRoute compares route patterns, not URLs: `/udi/abc` must be matched against `/udi/:id` here.
  const parametric = options.routes
    .filter((r) => r.url.includes(':'))
    .map((r) => ({
      method: r.method,
      pattern: new RegExp(
        `^${r.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '[^/]+')}/?$`,
      ),
    }));
  const noRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter(
      (method) =>
        app.hasRoute({ method, url }) || parametric.some((r) => r.method === method && r.pattern.test(url)),
    );
    if (allowed.length > 0) {
      // fastify answers HEAD wherever GET is routed: Allow says so (found by probing).
      reply.header('Allow', allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', '));
      return send(
        reply,
        new ServiceError(405, 'method_not_allowed', `${request.method} is not allowed on ${url}`),
      );
    }
    return send(reply, new ServiceError(404, 'not_found', `no route ${request.method} ${url}`));
  };
  // decisions §1 checks the route first: a request for no route is answered before its body is
  // parsed (fastify would otherwise parse a DELETE's JSON body and answer 400 for a wrong method).
  // Before that, a pipelined request waits for the answer before it (pipelined.ts).
  app.addHook('onRequest', async (request, reply) => {
    if (!(await takeTurn(request.raw, reply.raw))) return reply.hijack();
    if (request.is404) return noRoute(request, reply);
  });
  app.setNotFoundHandler(noRoute);

  const budget = new BodyBudget(limits.bodyBytesInFlight);
  for (const spec of options.routes) {
    const scalars = spec.query ? scalarParameters(spec.query) : new Set<string>();
    for (const name of spec.bracketDecoded ?? []) scalars.delete(name);
    app.route({
      method: spec.method,
      url: spec.url,
      onRequest: async (request) => {
        if (spec.public) return;
        // Keyed by the socket's address (no trustProxy): a header could name any address it liked.
        authFailures.check(request.ip);
        let auth: ReturnType<typeof authenticate>;
        try {
          auth = authenticate(request, options.tenants);
        } catch (error) {
          authFailures.failed(request.ip);
          throw error;
        }
        checkNamedTenant(request.query, auth.tenant);
        request.tenant = auth.tenant;
        request.keyHash = auth.keyHash;
        options.rateLimiter?.take(auth.keyHash, spec.rate ?? 'ingest');
      },
      preParsing: async (request, reply, payload) => {
        const encoding = checkBodyType(request, spec.otlp === true);
        const bytes = declaredBodyBytes(request);
        if (bytes > options.bodyLimit) {
          throw new ServiceError(
            413,
            'payload_too_large',
            `request body of ${bytes} bytes is larger than the limit of ${options.bodyLimit}`,
          );
        }
        const reservation = budget.reserve(bytes, request.ip);
        reply.raw.once('close', reservation.release);
        // A Content-Length body is covered by its reservation; a chunked or decoded one, as it arrives.
        if (encoding === 'gzip') return meteredBody(gunzipBody(payload), reservation);
        return request.headers['transfer-encoding'] === undefined
          ? payload
          : meteredBody(payload, reservation);
      },
      handler: async (request, reply) => {
        let body: unknown;
        if (spec.body) {
          const parsed = spec.body.safeParse(request.body, { error: routeErrorMap });
          // No body at all read as "invalid input: required" at path "" (found by fuzzing).
          if (!parsed.success && request.body === undefined) {
            throw invalidInput([
              {
                path: '',
                message: 'the request has no body: send a JSON value (Content-Type: application/json)',
              },
            ]);
          }
          if (!parsed.success) throw invalidInput(issuesFromZod(parsed.error));
          body = parsed.data;
        }
        let query: unknown = request.query;
        // On every route, whether it reads parameters or not (decisions §1: invalid input anywhere).
        const unsafe = unsafeQueryKey(request.query as Record<string, unknown>);
        if (unsafe !== undefined) {
          // It was dropped, and the rest of the object taken (found by probing).
          throw invalidInput([
            {
              path: unsafe,
              message: FORBIDDEN_KEY_MESSAGE,
            },
          ]);
        }
        const bracketed = scalarBrackets(request.query as Record<string, unknown>, scalars);
        if (bracketed.length > 0) throw invalidInput(bracketed);
        if (spec.query) {
          const raw = spec.bracketQuery
            ? bracketObjects(
                request.query as Record<string, unknown>,
                spec.bracketQuery === true ? undefined : spec.bracketQuery,
              )
            : request.query;
          const parsed = spec.query.safeParse(raw, { error: routeErrorMap });
          if (!parsed.success)
            throw invalidInput(
              repeatedParameters(request.query as Record<string, unknown>, issuesFromZod(parsed.error)),
            );
          query = parsed.data;
        }
        let params: unknown = request.params;
        if (spec.params) {
          const parsed = spec.params.safeParse(request.params, { error: routeErrorMap });
          if (!parsed.success) throw invalidInput(issuesFromZod(parsed.error));
          params = parsed.data;
        }
        const tenant = request.tenant ?? { orgId: '', projectId: '' };
        const gone = new AbortController();
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        const result = await spec.handler({
          tenant,
          body,
          query,
          params,
          request,
          reply,
          signal: gone.signal,
        });
        // A handler that answered in another encoding (OTLP protobuf) has sent its reply itself.
        if (reply.sent) return reply;
        return reply.type('application/json').send(result);
      },
    });
  }
  return app;
}
