import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { BracketTypes } from '../../shared/api-params.js';
import type { Scope } from '../identity/identity.js';

export interface RouteContext<Body, Query, Params = unknown> {
  tenant: Scope;
  body: Body;
  query: Query;
  /** Path parameters (`/udi/:id`), validated by `params` when the route declares it. */
  params: Params;
  request: FastifyRequest;
  reply: FastifyReply;
  /** Aborts when the client closes the connection before the answer is sent: leaseRead stops its query. */
  signal: AbortSignal;
}

/**
 * One route, declared once: fastify registers it, the OpenAPI document describes it, and the runner
 * validates its input with the same zod schemas. `rate` picks the rate-limit bucket.
 */
export interface RouteSpec<Body = unknown, Query = unknown, Params = unknown> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** fastify syntax for path parameters (`/bc/v1/udi/:id`); the OpenAPI document shows `{id}`. */
  url: string;
  summary: string;
  /** Longer text for the OpenAPI document: our decisions where the public description is silent. */
  description?: string;
  tag: string;
  body?: z.ZodType<Body>;
  query?: z.ZodType<Query>;
  params?: z.ZodType<Params>;
  /**
   * Rebuild bracket-form object parameters (`range[start]=…`) before `query` validates them; a
   * function also reads the values that are numbers or booleans (see BracketTypes).
   */
  bracketQuery?: true | BracketTypes;
  /** Parameters of one declared value whose bracket form the handler reads itself (`chartControls`). */
  bracketDecoded?: readonly string[];
  response: z.ZodType;
  /** Routes without auth: only /healthz. */
  public?: boolean;
  /** Also takes OTLP's `application/x-protobuf` bodies (a Buffer); every route takes `Content-Encoding: gzip`. */
  otlp?: boolean;
  rate?: 'ingest' | 'chart';
  /** The route's own refusals, for the OpenAPI document: what a 404 or a 409 of this route means. */
  refusals?: Partial<Record<404 | 409, string>>;
  handler(ctx: RouteContext<Body, Query, Params>): Promise<unknown>;
}

/** Lets each module declare routes with their own body/query types in one array. */
export function route<Body, Query, Params = unknown>(spec: RouteSpec<Body, Query, Params>): RouteSpec {
  return spec as unknown as RouteSpec;
}
