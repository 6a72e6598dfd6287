import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { issuesFromZod } from '../../shared/errors.js';
import { invalidInput, ServiceError } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import type { Tenants } from '../store/tenants.js';
import { authenticate } from './auth.js';
import { clientErrorHandler, frameworkErrorHandler } from './client-errors.js';
import { parseJsonBody } from './json-body.js';
import type { RateLimiter } from './rate-limit.js';
import type { RouteSpec } from './route.js';

export interface ServerOptions {
  tenants: Tenants;
  routes: ReadonlyArray<RouteSpec>;
  bodyLimit: number;
  /** Per-key token buckets; absent means unlimited (tests of other concerns). */
  rateLimiter?: RateLimiter;
  /** Where unexpected failures are reported: one line each, never a stack or a secret. */
  log: (line: string) => void;
}

declare module 'fastify' {
  interface FastifyRequest {
    tenant?: Scope;
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

/**
 * Messages quote caller text (ids, cohort names, paths): one line and bounded, whatever was quoted,
 * so an error can neither forge extra log lines nor balloon.
 */
function oneLineMessage(message: string): string {
  let escaped = '';
  for (const c of message) {
    const code = c.charCodeAt(0);
    escaped += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : c;
  }
  return escaped.length > 500 ? `${escaped.slice(0, 497)}...` : escaped;
}

function send(reply: FastifyReply, error: ServiceError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const body = error.toBody();
  return reply
    .status(error.status)
    .type('application/json')
    .send({ ...body, message: oneLineMessage(body.message) });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Maps fastify's own failures (parsing, limits) onto decisions §1 statuses and codes. */
function toServiceError(error: FastifyError): ServiceError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ServiceError(415, 'unsupported_media_type', 'request bodies must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ServiceError(413, 'payload_too_large', 'request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ServiceError(400, 'invalid_input', 'Content-Length does not match the body');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ServiceError(400, 'invalid_input', 'the request could not be read');
  }
  return undefined;
}

export function buildServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    bodyLimit: options.bodyLimit,
    logger: false,
    return503OnClosing: true,
    // Query strings like chartControls[range][start] stay flat keys; the chart routes read both forms.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Refusals before any route runs (bad HTTP, 16 KiB header overflow, bad percent-encoding) get
    // our error body too, not fastify's.
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
  });

  // Our own JSON parser names the path of a forbidden key; no other body type is accepted (415).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    let text: string;
    try {
      // Strict decoding: invalid UTF-8 is refused, never stored as U+FFFD.
      text = utf8.decode(body as Buffer);
    } catch {
      done(new ServiceError(400, 'invalid_input', 'request body is not valid UTF-8'), undefined);
      return;
    }
    try {
      done(null, parseJsonBody(text, (body as Buffer).length));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // Sockets that finish a request after close() began must not linger in keep-alive, or close()
  // would wait for their idle timeout; telling the client to close them lets shutdown complete.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error instanceof ServiceError) return send(reply, error);
    const mapped = toServiceError(error);
    if (mapped) return send(reply, mapped);
    options.log(`internal error: ${error.name}: ${error.message.split('\n')[0]}`);
    return send(reply, new ServiceError(500, 'internal', 'internal error; the service logged it'));
  });

  app.setNotFoundHandler((request, reply) => {
    const url = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((method) => app.hasRoute({ method, url }));
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return send(
        reply,
        new ServiceError(405, 'method_not_allowed', `${request.method} is not allowed on ${url}`),
      );
    }
    return send(reply, new ServiceError(404, 'not_found', `no route ${request.method} ${url}`));
  });

  for (const spec of options.routes) {
    app.route({
      method: spec.method,
      url: spec.url,
      onRequest: async (request) => {
        if (spec.public) return;
        const { tenant, keyHash } = authenticate(request, options.tenants);
        request.tenant = tenant;
        options.rateLimiter?.take(keyHash, spec.rate ?? 'ingest');
      },
      handler: async (request, reply) => {
        let body: unknown;
        if (spec.body) {
          const parsed = spec.body.safeParse(request.body);
          if (!parsed.success) throw invalidInput(issuesFromZod(parsed.error));
          body = parsed.data;
        }
        let query: unknown = request.query;
        if (spec.query) {
          const parsed = spec.query.safeParse(request.query);
          if (!parsed.success) throw invalidInput(issuesFromZod(parsed.error));
          query = parsed.data;
        }
        const tenant = request.tenant ?? { orgId: '', projectId: '' };
        const result = await spec.handler({ tenant, body, query, request, reply });
        return reply.type('application/json').send(result);
      },
    });
  }
  return app;
}
