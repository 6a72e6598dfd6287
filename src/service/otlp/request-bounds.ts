/**
 * What one OTLP export request may hold, checked before any of it is parsed: 3.4 million empty
 * `resourceSpans` (10 MB of JSON) held the service's one JS thread for 84 s, every other tenant's
 * requests and /healthz included, and 2.5 million empty protobuf entries (5 MB) 22 s. Exporters send
 * 512 spans a batch by default, a Collector's batch processor 8,192.
 */
export const MAX_OTLP_SPANS = 10_000;
/** Resource and scope entries, which hold the spans. */
const MAX_OTLP_CONTAINERS = 10_000;
/** JSON nesting (attribute values nest arrays and key lists): 100,000 levels overflowed the stack, a 500. */
const MAX_DEPTH = 64;

const SMALLER = 'send it in smaller batches';

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const listOf = (v: unknown, key: string): unknown[] => {
  const list = isRecord(v) ? v[key] : undefined;
  return Array.isArray(list) ? list : [];
};

/** Why a request in the JSON encoding's shape is refused, if it is: too many entries, or too deep. */
export function otlpBoundsProblem(body: unknown): string | undefined {
  const resources = listOf(body, 'resourceSpans');
  let containers = resources.length;
  let spans = 0;
  for (const r of resources) {
    if (containers > MAX_OTLP_CONTAINERS || spans > MAX_OTLP_SPANS) break;
    const scopes = listOf(r, 'scopeSpans');
    containers += scopes.length;
    for (const s of scopes) spans += listOf(s, 'spans').length;
  }
  if (containers > MAX_OTLP_CONTAINERS)
    return `more than ${MAX_OTLP_CONTAINERS} resource and scope entries in one request; ${SMALLER}`;
  if (spans > MAX_OTLP_SPANS) return `more than ${MAX_OTLP_SPANS} spans in one request; ${SMALLER}`;
  // Walked with a stack of its own: the depth that is refused must not overflow the walk either.
  const stack: Array<{ value: unknown; depth: number }> = [{ value: body, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > MAX_DEPTH) return `nested more than ${MAX_DEPTH} levels deep`;
    const children = Array.isArray(top.value)
      ? top.value
      : isRecord(top.value)
        ? Object.values(top.value)
        : [];
    for (const value of children)
      if (value !== null && typeof value === 'object') stack.push({ value, depth: top.depth + 1 });
  }
  return undefined;
}

/** The length-delimited fields of `body[from, to)`, as [field number, start, end]; undefined if malformed. */
function lengthFields(
  body: Uint8Array,
  from: number,
  to: number,
): Array<[number, number, number]> | undefined {
  const out: Array<[number, number, number]> = [];
  let at = from;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= to) return undefined;
      const byte = body[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    return undefined;
  };
  while (at < to) {
    const tag = varint();
    if (tag === undefined) return undefined;
    const wire = tag % 8;
    if (wire === 2) {
      const length = varint();
      if (length === undefined || at + length > to) return undefined;
      out.push([Math.floor(tag / 8), at, at + length]);
      at += length;
    } else if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else return undefined;
    if (out.length > MAX_OTLP_SPANS + MAX_OTLP_CONTAINERS) return out;
  }
  return out;
}

/**
 * Why an encoded request is refused before protobufjs decodes it (decoding is where the time went):
 * its `resourceSpans` (field 1), their `scopeSpans` (field 2) and those's `spans` (field 2) counted
 * by skipping over the bytes. Undefined when within bounds, or when the bytes stop making sense
 * (decoding then says why).
 */
export function protobufBoundsProblem(body: Uint8Array): string | undefined {
  const resources = (lengthFields(body, 0, body.length) ?? []).filter(([field]) => field === 1);
  let containers = resources.length;
  let spans = 0;
  for (const [, start, end] of resources) {
    if (containers > MAX_OTLP_CONTAINERS || spans > MAX_OTLP_SPANS) break;
    const scopes = (lengthFields(body, start, end) ?? []).filter(([field]) => field === 2);
    containers += scopes.length;
    for (const [, from, to] of scopes) {
      spans += (lengthFields(body, from, to) ?? []).filter(([field]) => field === 2).length;
      if (spans > MAX_OTLP_SPANS) break;
    }
  }
  if (containers > MAX_OTLP_CONTAINERS)
    return `more than ${MAX_OTLP_CONTAINERS} resource and scope entries in one request; ${SMALLER}`;
  if (spans > MAX_OTLP_SPANS) return `more than ${MAX_OTLP_SPANS} spans in one request; ${SMALLER}`;
  return undefined;
}
