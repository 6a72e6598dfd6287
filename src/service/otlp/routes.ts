import { z } from 'zod';
import { parseQueueBody, type WireEvent } from '../../shared/events.js';
import { issueField, issueIndex } from '../../shared/issue-index.js';
import type { Limits } from '../../shared/limits.js';
import { mapGenAiSpan } from '../../shared/otel-genai.js';
import { otlpSpans } from '../../shared/otlp-spans.js';
import { invalidInput, ServiceError } from '../errors.js';
import { mayHoldLoneSurrogate } from '../http/json-body.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import type { Ingestor } from '../ingest/ingestor.js';
import { decodeTraceRequest, encodeTraceResponse } from './protobuf.js';
import { otlpBoundsProblem } from './request-bounds.js';

export const OTLP_TRACES_PATH = '/v1/traces';

/** OTLP's `ExportTraceServiceResponse` in its JSON encoding. */
const exportResponseSchema = z.object({
  partialSuccess: z
    .object({
      rejectedSpans: z.number().int().min(0),
      errorMessage: z.string(),
    })
    .optional()
    .describe('present when some spans were refused: how many, and why (the first reasons)'),
});
type ExportResponse = z.infer<typeof exportResponseSchema>;

interface Mapped {
  events: WireEvent[];
  rejected: string[];
}

/** Spans → valid wire events; a span that cannot be read or whose event is invalid is rejected with its reason. */
function mapSpans(body: unknown, limits: Limits): Mapped {
  const bounds = otlpBoundsProblem(body);
  if (bounds !== undefined) throw invalidInput([{ path: '', message: bounds }], 'OTLP export too large');
  const { spans, issues, malformed } = otlpSpans(body, mayHoldLoneSurrogate(body));
  if (malformed !== undefined)
    throw invalidInput([{ path: '', message: malformed }], 'not an OTLP trace export');
  const rejected = issues.map((i) => `${i.path}: ${i.message}`);
  const events: WireEvent[] = [];
  for (const span of spans) {
    const mapped = mapGenAiSpan(span);
    if (mapped.kind === 'skip') continue;
    const parsed = parseQueueBody([mapped.event], { eventBytes: limits.eventBytes });
    if (parsed.ok) events.push(...parsed.events);
    else
      rejected.push(
        // An issue of the whole event (its size) has no path left: no blank before its message.
        `span ${span.spanId}: ${parsed.issues.map((i) => `${i.path.replace(/^\[0\]\.?/, '')} ${i.message}`.trimStart()).join('; ')}`,
      );
  }
  // The ingest core places events in their sessions by time; a batch in time order plans fastest.
  events.sort((a, b) => (a.timestamp ?? '').localeCompare(b.timestamp ?? ''));
  return { events, rejected };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The events through the same ingest core as `POST /bc/v1/events/queue`, in requests of at most
 * `eventsPerRequest`. A request the core refuses (400/409: a closed conversation, a session that
 * belongs to another user) names the refused events in its issues: they are rejected and the rest
 * sent again, so only the refused spans are rejected. One span at a time, as this used to be, took
 * 41 s for one refused span among 2,000 (found by probing); that is left for a refusal naming none.
 */
async function ingestSpans(
  ingestor: Ingestor,
  tenant: Scope,
  mapped: Mapped,
  limits: Limits,
): Promise<string[]> {
  const rejected = [...mapped.rejected];
  const receivedAt = Date.now();
  const refusal = (error: unknown): ServiceError => {
    if (!(error instanceof ServiceError) || (error.status !== 400 && error.status !== 409)) throw error;
    return error;
  };
  for (const batch of chunks(mapped.events, limits.eventsPerRequest)) {
    let pending = batch;
    while (pending.length > 0) {
      try {
        await ingestor.ingest(tenant, () => pending, receivedAt);
        break;
      } catch (error) {
        const refused = refusedEvents(refusal(error), pending.length);
        if (refused.size === 0) {
          for (const event of pending) {
            try {
              await ingestor.ingest(tenant, () => [event], receivedAt);
            } catch (alone) {
              rejected.push(`${event.event_id ?? 'span'}: ${refusal(alone).message}`);
            }
          }
          break;
        }
        const sent = pending;
        for (const [i, why] of refused) rejected.push(`${sent[i]?.event_id ?? 'span'}: ${why}`);
        pending = sent.filter((_, i) => !refused.has(i));
      }
    }
  }
  return rejected;
}

/** The events a refusal's issues name (`[3].user_id: ...`), each with its first reason. */
function refusedEvents(error: ServiceError, size: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const issue of error.issues ?? []) {
    const index = issueIndex(issue.path);
    if (index === undefined || index >= size || out.has(index)) continue;
    const field = issueField(issue.path);
    out.set(index, field === '' ? issue.message : `${field}: ${issue.message}`);
  }
  return out;
}

function answer(rejected: readonly string[]): ExportResponse {
  if (rejected.length === 0) return {};
  const shown = rejected.slice(0, 5).join('; ');
  const more = rejected.length > 5 ? `; and ${rejected.length - 5} more` : '';
  return {
    partialSuccess: { rejectedSpans: rejected.length, errorMessage: `${shown}${more}`.slice(0, 2000) },
  };
}

const OTLP_BODY =
  'Our extension: an OTLP ExportTraceServiceRequest as application/json or application/x-protobuf, ' +
  'optionally with Content-Encoding: gzip; authenticated like every route (Authorization: Bearer <key> and ' +
  'X-App-ID: <project>, e.g. OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<key>,X-App-ID=<project>). ' +
  'Chat spans (gen_ai.operation.name chat, text_completion or generate_content; or a model with OpenInference ' +
  'or older gen_ai.prompt.N attributes) become Conversation Turn events, embeddings Conversation Usage, ' +
  'execute_tool spans Conversation Function; other spans are accepted and ignored. Each event is stored once, ' +
  "as otel-<trace id>-<span id>. Refused spans are counted in partialSuccess; a JSON request's errors use our JSON error body, a protobuf request's a protobuf google.rpc.Status (OTLP/HTTP).";

/** `POST /v1/traces`: the OTLP/HTTP trace receiver (issue 19). */
export function otlpRoutes(ingestor: Ingestor, limits: Limits) {
  return [
    route({
      method: 'POST',
      url: OTLP_TRACES_PATH,
      tag: 'OpenTelemetry',
      summary:
        'OTLP/HTTP trace receiver: GenAI spans become turns, usage and function calls (idempotent by span id)',
      otlp: true,
      body: z.unknown().meta({ description: OTLP_BODY }),
      response: exportResponseSchema,
      rate: 'ingest',
      handler: async ({ tenant, body, reply }) => {
        const protobuf = Buffer.isBuffer(body);
        const request = protobuf ? await decodeTraceRequest(body) : body;
        const rejected = await ingestSpans(ingestor, tenant, mapSpans(request, limits), limits);
        const result = answer(rejected);
        if (!protobuf) return result;
        // A protobuf request gets a protobuf answer (OTLP/HTTP), sent here rather than as JSON.
        reply.type('application/x-protobuf').send(await encodeTraceResponse(result.partialSuccess));
        return reply;
      },
    }),
  ];
}
