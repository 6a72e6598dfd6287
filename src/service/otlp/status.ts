/**
 * OTLP/HTTP answers a protobuf request's failure with a protobuf `google.rpc.Status` in the request's
 * content type ("The response body for all HTTP 4xx and HTTP 5xx responses MUST be a
 * Protobuf-encoded Status message"), so an exporter can log why it was refused. Status is three
 * fields; the two we fill are written by hand rather than by loading google/rpc/status.proto.
 */

/** gRPC's codes for our HTTP statuses (google.rpc.Code), the nearest where there is no exact one. */
const GRPC_CODE: Readonly<Record<number, number>> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  408: 4, // DEADLINE_EXCEEDED
  409: 10, // ABORTED
  413: 8, // RESOURCE_EXHAUSTED
  415: 3, // INVALID_ARGUMENT
  429: 8, // RESOURCE_EXHAUSTED
  431: 8, // RESOURCE_EXHAUSTED
  503: 14, // UNAVAILABLE
};

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n >>> 0;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

/** `google.rpc.Status { int32 code = 1; string message = 2; }` for an HTTP error status. */
export function encodeRpcStatus(httpStatus: number, message: string): Buffer {
  const code = GRPC_CODE[httpStatus] ?? (httpStatus >= 500 ? 13 : 2); // INTERNAL, else UNKNOWN
  const text = Buffer.from(message, 'utf8');
  return Buffer.concat([
    Buffer.from([0x08, ...varint(code)]),
    Buffer.from([0x12, ...varint(text.length)]),
    text,
  ]);
}

/** The message of our JSON error body, or the whole text where it is not one. */
export function errorMessageOf(payload: unknown): string {
  const text = Buffer.isBuffer(payload)
    ? payload.toString('utf8')
    : typeof payload === 'string'
      ? payload
      : '';
  try {
    const body = JSON.parse(text) as { message?: unknown };
    return typeof body.message === 'string' ? body.message : text;
  } catch {
    return text;
  }
}
