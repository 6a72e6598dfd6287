import { ServiceError } from '../errors.js';
import { protobufBoundsProblem } from './request-bounds.js';

/** The parts of a protobufjs static message class this module uses. */
interface MessageCodec {
  decode(buffer: Uint8Array): object;
  toObject(message: object, options: Record<string, unknown>): unknown;
  fromObject(value: object): object;
  encode(message: object): { finish(): Uint8Array };
}

interface Codecs {
  request: MessageCodec;
  response: MessageCodec;
}

let codecs: Promise<Codecs> | undefined;

function codecAt(root: unknown, path: string): MessageCodec {
  let node: unknown = root;
  for (const name of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[name];
  const codec = node as Partial<MessageCodec> | undefined;
  if (typeof codec?.decode !== 'function' || typeof codec.encode !== 'function') {
    throw new Error(`the OTLP protobuf root has no ${path}`);
  }
  return codec as MessageCodec;
}

/**
 * The messages of `opentelemetry/proto/collector/trace/v1/trace_service.proto`, from the protobuf
 * root OpenTelemetry generates from the official protos (loaded on the first protobuf request, so
 * JSON-only services never pay for it).
 */
function load(): Promise<Codecs> {
  codecs ??= import('@opentelemetry/otlp-transformer/build/src/generated/root.js').then(
    ({ default: root }) => ({
      request: codecAt(root, 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
      response: codecAt(root, 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    }),
  );
  return codecs;
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Ids travel as bytes; OTLP/JSON writes them as hex, which is the shape otlp-spans.ts reads. */
function idsToHex(value: unknown, key?: string): unknown {
  if (typeof value === 'string' && key !== undefined && ID_FIELDS.has(key)) {
    return Buffer.from(value, 'base64').toString('hex');
  }
  if (Array.isArray(value)) return value.map((v) => idsToHex(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, idsToHex(v, k)]));
  }
  return value;
}

/** An `ExportTraceServiceRequest` in protobuf as the JSON encoding's object (ids hex, 64-bit numbers as text). */
export async function decodeTraceRequest(body: Buffer): Promise<unknown> {
  const { request } = await load();
  const bounds = protobufBoundsProblem(body);
  if (bounds !== undefined) throw new ServiceError(400, 'invalid_input', bounds);
  let message: object;
  try {
    message = request.decode(body);
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : 'malformed';
    throw new ServiceError(
      400,
      'invalid_input',
      `request body is not an OTLP ExportTraceServiceRequest: ${why}`,
    );
  }
  try {
    return idsToHex(
      request.toObject(message, { longs: String, bytes: String, enums: Number, defaults: false }),
    );
  } catch (error) {
    // Both walk the message recursively: a value nested deep enough overflows the stack.
    if (error instanceof RangeError)
      throw new ServiceError(400, 'invalid_input', 'request body is nested too deep');
    throw error;
  }
}

/** `ExportTraceServiceResponse` in protobuf. */
export async function encodeTraceResponse(partial?: {
  rejectedSpans: number;
  errorMessage: string;
}): Promise<Buffer> {
  const { response } = await load();
  const message = response.fromObject(partial ? { partialSuccess: partial } : {});
  return Buffer.from(response.encode(message).finish());
}
