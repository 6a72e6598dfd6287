import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Scope } from '../identity/identity.js';

export interface RouteContext<Body, Query> {
  tenant: Scope;
  body: Body;
  query: Query;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * One route, declared once: fastify registers it, the OpenAPI document describes it, and the runner
 * validates its input with the same zod schemas. `rate` picks the rate-limit bucket.
 */
export interface RouteSpec<Body = unknown, Query = unknown> {
  method: 'GET' | 'POST';
  url: string;
  summary: string;
  tag: string;
  body?: z.ZodType<Body>;
  query?: z.ZodType<Query>;
  response: z.ZodType;
  /** Routes without auth: only /healthz. */
  public?: boolean;
  /** Also takes OTLP's encodings: `application/x-protobuf` bodies (a Buffer) and `Content-Encoding: gzip`. */
  otlp?: boolean;
  rate?: 'ingest' | 'chart';
  handler(ctx: RouteContext<Body, Query>): Promise<unknown>;
}

/** Lets each module declare routes with their own body/query types in one array. */
export function route<Body, Query>(spec: RouteSpec<Body, Query>): RouteSpec {
  return spec as unknown as RouteSpec;
}
