import { z } from 'zod';
import { errorBodySchema } from '../../shared/errors.js';
import type { RouteSpec } from './route.js';

type JsonSchema = Record<string, unknown>;

/** Accepting schemas whose description is another schema's: see `documentedAs`. */
const documentedShapes = new WeakMap<z.ZodType, z.ZodType>();

/**
 * `accepting` validates; the OpenAPI document describes it as `shape`. The shape's JSON Schema is
 * built only when the document is: building the event routes' at registration cost every embedded
 * command ~25 ms of start-up, and few ever ask for the document.
 */
export function documentedAs<T extends z.ZodType>(accepting: T, shape: z.ZodType): T {
  documentedShapes.set(accepting, shape);
  return accepting;
}

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const shape = documentedShapes.get(schema);
  if (shape) return schemaOf(shape, 'input');
  // `unrepresentable: 'any'` keeps transforms and refinements from aborting the document.
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * Meta of a query parameter its schema leaves optional, as its bracket form arrives under other keys
 * (`chartControls[range][start]`), that the route requires all the same: the document says required.
 */
export const REQUIRED_PARAM = { 'x-cas-required': true } as const;

function queryParameters(schema: z.ZodType, place: 'query' | 'path' = 'query'): JsonSchema[] {
  const json = schemaOf(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, value]) => {
    const { 'x-cas-required': marked, ...shape } = value;
    const parameter = {
      name,
      in: place,
      required: place === 'path' || required.has(name) || marked === true,
    };
    // An object or array travels as compact JSON (decisions §1): without `content`, OpenAPI's default
    // (form, exploded) made generated clients send `?start=…&end=…`, which is a 400.
    return shape.type === 'object' || shape.type === 'array'
      ? { ...parameter, content: { 'application/json': { schema: shape } } }
      : { ...parameter, schema: shape };
  });
}

/** fastify's `/udi/:id` is OpenAPI's `/udi/{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** OpenAPI 3.1 of the routes as registered, from the same zod schemas that validate requests. */
/**
 * The OTLP receiver takes and answers protobuf too (OTLP/HTTP); the document listed only JSON (found
 * by probing). Its messages are OTLP's own, named here, not described by our schemas.
 */
const PROTOBUF = 'application/x-protobuf';
const protobufOf = (message: string): JsonSchema => ({
  schema: { type: 'string', format: 'binary', description: `opentelemetry.proto ${message}` },
});

/** The version of the interface this document describes (interface-spec §9.2), not of cas. */
export const INTERFACE_VERSION = '1.0.0';

export function buildOpenApi(routes: ReadonlyArray<RouteSpec>, version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const errorResponse = { content: { 'application/json': { schema: schemaOf(errorBodySchema, 'output') } } };
  for (const r of routes) {
    const op: JsonSchema = {
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      responses: {
        '200': {
          description: 'OK',
          content: {
            'application/json': { schema: schemaOf(r.response, 'output') },
            ...(r.otlp ? { [PROTOBUF]: protobufOf('ExportTraceServiceResponse') } : {}),
          },
        },
        '400': { description: 'Invalid input', ...errorResponse },
        ...Object.fromEntries(
          Object.entries(r.refusals ?? {}).map(([status, description]) => [
            status,
            { description, ...errorResponse },
          ]),
        ),
        ...(r.public
          ? {}
          : {
              '401': { description: 'Missing credentials', ...errorResponse },
              '403': { description: 'Unknown key or foreign project', ...errorResponse },
              '429': { description: 'Rate limited (see Retry-After)', ...errorResponse },
            }),
        ...(r.body || r.otlp
          ? {
              '413': { description: 'Body larger than the limit', ...errorResponse },
              '415': { description: 'Body of another type or encoding', ...errorResponse },
            }
          : {}),
        '408': { description: 'Headers or request not received in time', ...errorResponse },
        '503': {
          description:
            'Busy (connections, bodies in flight, readers) or storage unavailable; see Retry-After',
          ...errorResponse,
        },
      },
      ...(r.public ? { security: [] } : {}),
    };
    if (r.body) {
      op.requestBody = {
        required: true,
        content: {
          'application/json': { schema: schemaOf(r.body, 'input') },
          ...(r.otlp ? { [PROTOBUF]: protobufOf('ExportTraceServiceRequest') } : {}),
        },
      };
    }
    const parameters = [
      ...(r.params ? queryParameters(r.params, 'path') : []),
      ...(r.query ? queryParameters(r.query) : []),
    ];
    if (parameters.length > 0) op.parameters = parameters;
    const path = openApiPath(r.url);
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: op };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'cas local service',
      // interface-spec §9: the interface description carries its own version; cas's is beside it.
      version: INTERFACE_VERSION,
      'x-cas-version': version,
      description: 'Conversational analytics service (local, DuckDB).',
    },
    components: {
      securitySchemes: {
        APIKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'Bearer <key> or the bare key',
        },
        APPId: { type: 'apiKey', in: 'header', name: 'X-App-ID', description: 'Project id' },
      },
    },
    security: [{ APIKey: [], APPId: [] }],
    paths,
  };
}
