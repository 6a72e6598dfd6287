import { z } from 'zod';
import { findJsonProblem, LONE_SURROGATE_MESSAGE } from './json-problem.js';
import { nanosToIso, type OtelAttributes, type OtelSpan, type OtelValue } from './otel-genai.js';

/**
 * OTLP's `ExportTraceServiceRequest` in its JSON encoding (opentelemetry-proto, `trace_service.proto`):
 * `resourceSpans[].scopeSpans[].spans[]`, ids as hex, times as nanoseconds (string or number),
 * attributes as `[{key, value: AnyValue}]`. The receiver turns protobuf into this shape first.
 */
type AnyValueJson = {
  stringValue?: string | undefined;
  boolValue?: boolean | undefined;
  intValue?: string | number | undefined;
  doubleValue?: number | string | undefined;
  bytesValue?: string | undefined;
  arrayValue?: { values?: AnyValueJson[] | undefined } | undefined;
  kvlistValue?: { values?: Array<{ key: string; value?: AnyValueJson | undefined }> | undefined } | undefined;
};

const anyValueSchema: z.ZodType<AnyValueJson> = z.lazy(() =>
  z.looseObject({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string().regex(/^-?\d+$/), z.number().int()]).optional(),
    doubleValue: z.union([z.number(), z.string()]).optional(),
    bytesValue: z.string().optional(),
    arrayValue: z.looseObject({ values: z.array(anyValueSchema).optional() }).optional(),
    kvlistValue: z
      .looseObject({
        values: z.array(z.looseObject({ key: z.string(), value: anyValueSchema.optional() })).optional(),
      })
      .optional(),
  }),
);

const keyValuesSchema = z
  .array(z.looseObject({ key: z.string(), value: anyValueSchema.optional() }))
  .optional();
// Nanoseconds pass 2^53: a JSON number of them has lost its last digits already, which only
// moves a time by less than a microsecond: rounded to whole microseconds.
const nanosSchema = z
  .union([z.string().regex(/^\d{1,25}$/, 'must be nanoseconds since the epoch'), z.number().min(0).max(1e24)])
  .transform((n) => (typeof n === 'string' ? n : (BigInt(Math.round(n / 1000)) * 1000n).toString()));
// OTLP: an id of all zeroes is invalid. Every such span would be stored under one event id, the
// first of them, and the rest dropped as its duplicates (found by probing).
const hexId = (bytes: number) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`), `must be ${bytes} bytes as hex`)
    .refine((s) => !/^0+$/.test(s), 'must not be all zeroes (an invalid id in OTLP)')
    .transform((s) => s.toLowerCase());
/**
 * A span's start: 0 is OTLP's "unknown", and a time no date can hold cannot be stored. Such spans
 * were stamped on arrival, piling a backfill onto the moment it was sent (found by probing); the
 * receiver refuses them in partialSuccess and an import refuses the record, as for any event time.
 */
const startSchema = nanosSchema.refine(
  (n) => nanosToIso(n) !== undefined,
  'must be a known time: nanoseconds since 1970-01-01 (0 is unknown in OTLP)',
);

const spanSchema = z.looseObject({
  traceId: hexId(16),
  spanId: hexId(8),
  name: z.string().default(''),
  startTimeUnixNano: startSchema,
  endTimeUnixNano: nanosSchema.optional(),
  attributes: keyValuesSchema,
  events: z
    .array(
      z.looseObject({
        name: z.string().default(''),
        timeUnixNano: nanosSchema.optional(),
        attributes: keyValuesSchema,
      }),
    )
    .optional(),
  status: z
    .looseObject({ code: z.union([z.number(), z.string()]).optional(), message: z.string().optional() })
    .optional(),
});

const requestSchema = z.looseObject({
  resourceSpans: z
    .array(
      z.looseObject({
        resource: z.looseObject({ attributes: keyValuesSchema }).optional(),
        scopeSpans: z.array(z.looseObject({ spans: z.array(z.unknown()).optional() })).optional(),
      }),
    )
    .optional(),
});

function decodeAnyValue(v: AnyValueJson | undefined): OtelValue {
  if (v === undefined) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.bytesValue !== undefined) return v.bytesValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(decodeAnyValue);
  if (v.kvlistValue !== undefined) return attributesOf(v.kvlistValue.values);
  return null;
}

function attributesOf(
  list: Array<{ key: string; value?: AnyValueJson | undefined }> | undefined,
): OtelAttributes {
  const out: Record<string, OtelValue> = {};
  // Keys such as __proto__ would not survive a plain object; an attribute of that name means nothing here.
  for (const { key, value } of list ?? []) if (key !== '__proto__') out[key] = decodeAnyValue(value);
  return out;
}

const STATUS_CODES: Readonly<Record<string, number>> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/** A span that could not be read, with its JSON path in the request (`resourceSpans[0].scopeSpans[1].spans[2].traceId`). */
export interface SpanIssue {
  path: string;
  message: string;
}

/** One span of an export request: decoded, with its JSON path and the span as sent; or why it could not be read. */
export type SpanEntry =
  | { ok: true; span: OtelSpan; at: string; raw: unknown }
  | { ok: false; issue: SpanIssue };

/** Every span of an export request in order, each decoded or refused with its path. */
export function otlpSpanEntries(
  body: unknown,
  /** The body may hold a lone surrogate (its JSON text had a surrogate escape): each span is checked. */
  surrogates = false,
): { entries: SpanEntry[]; malformed?: string } {
  const request = requestSchema.safeParse(body);
  if (!request.success) {
    const issue = request.error.issues[0];
    return {
      entries: [],
      malformed: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  const entries: SpanEntry[] = [];
  // A lone surrogate (a cut emoji) costs the spans holding it, not the request: the receiver
  // refused all of it, and exporters do not retry a 400 (found by probing).
  const loneAt = (value: unknown, at: string): string | undefined => {
    const found = surrogates ? findJsonProblem(value, { keys: false, strings: true }) : undefined;
    return found && `${at}${pathSuffix(found.path)}`;
  };
  (request.data.resourceSpans ?? []).forEach((rs, r) => {
    const resource = attributesOf(rs.resource?.attributes);
    const loneInResource = loneAt(rs.resource, `resourceSpans[${r}].resource`);
    (rs.scopeSpans ?? []).forEach((ss, s) => {
      (ss.spans ?? []).forEach((raw, i) => {
        const at = `resourceSpans[${r}].scopeSpans[${s}].spans[${i}]`;
        const lone = loneInResource ?? loneAt(raw, at);
        if (lone !== undefined) {
          entries.push({ ok: false, issue: { path: lone, message: LONE_SURROGATE_MESSAGE } });
          return;
        }
        const parsed = spanSchema.safeParse(raw);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          entries.push({
            ok: false,
            issue: {
              // A span that is no object is refused at its own path: `spans[0]`, not `spans[0].`.
              path: issue === undefined || issue.path.length === 0 ? at : `${at}.${issue.path.join('.')}`,
              message: issue?.message ?? 'invalid span',
            },
          });
          return;
        }
        const span = parsed.data;
        const code = span.status?.code;
        entries.push({
          ok: true,
          at,
          raw,
          span: {
            traceId: span.traceId,
            spanId: span.spanId,
            name: span.name,
            startTimeUnixNano: span.startTimeUnixNano,
            endTimeUnixNano: span.endTimeUnixNano ?? span.startTimeUnixNano,
            attributes: attributesOf(span.attributes),
            resource,
            statusCode: typeof code === 'string' ? STATUS_CODES[code] : code,
            statusMessage: span.status?.message,
            events: (span.events ?? []).map((e) => ({
              name: e.name,
              timeUnixNano: e.timeUnixNano ?? span.startTimeUnixNano,
              attributes: attributesOf(e.attributes),
            })),
          },
        });
      });
    });
  });
  return { entries };
}

/** A path within a value, after the value's own: `.a[0]`, `[1]`, or nothing for the value itself. */
const pathSuffix = (path: string): string => (path === '' || path.startsWith('[') ? path : `.${path}`);

/** Every span of an export request, decoded, and the spans that are malformed (each with its path). */
export function otlpSpans(
  body: unknown,
  surrogates = false,
): { spans: OtelSpan[]; issues: SpanIssue[]; malformed?: string } {
  const { entries, malformed } = otlpSpanEntries(body, surrogates);
  if (malformed !== undefined) return { spans: [], issues: [], malformed };
  const spans: OtelSpan[] = [];
  const issues: SpanIssue[] = [];
  for (const e of entries) {
    if (e.ok) spans.push(e.span);
    else issues.push(e.issue);
  }
  return { spans, issues };
}
