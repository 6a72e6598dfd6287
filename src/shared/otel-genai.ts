import { createHash } from 'node:crypto';
import { EVENT_NAMES } from './event-names.js';
import { LIMITS } from './limits.js';
import { asksForTools, genAiText, lastUserText, outputText } from './otel-messages.js';

/**
 * OpenTelemetry GenAI spans → wire events (issue 19), a pure mapping shared by the OTLP receiver of
 * `cas serve` (`POST /v1/traces`) and the `otlp` import preset. Spans arrive decoded (otlp-spans.ts):
 * ids as lowercase hex, times as nanosecond strings, attributes as plain values.
 */
export type OtelValue = string | number | boolean | null | OtelValue[] | { [key: string]: OtelValue };
export type OtelAttributes = Readonly<Record<string, OtelValue>>;

export interface OtelSpanEvent {
  name: string;
  timeUnixNano: string;
  attributes: OtelAttributes;
}

export interface OtelSpan {
  traceId: string;
  spanId: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtelAttributes;
  /** The resource's attributes (`service.name`, and sometimes `session.id` / `user.id`). */
  resource: OtelAttributes;
  /** 2 is ERROR (OTLP's StatusCode). */
  statusCode?: number | undefined;
  statusMessage?: string | undefined;
  events: readonly OtelSpanEvent[];
}

/** What one span becomes: a turn, a usage or a function call; `skip` says why nothing was made. */
export type SpanMapping =
  | { kind: 'turn' | 'usage' | 'function'; event: Record<string, unknown> }
  | { kind: 'skip'; reason: string };

const first = (a: OtelAttributes, keys: readonly string[]): OtelValue | undefined => {
  for (const key of keys) {
    const v = a[key];
    if (v !== undefined && v !== null && v !== '') return v;
  }
  return undefined;
};

export function attrString(a: OtelAttributes, ...keys: string[]): string | undefined {
  const v = first(a, keys);
  if (v === undefined) return undefined;
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function attrCount(a: OtelAttributes, ...keys: string[]): number | undefined {
  const v = first(a, keys);
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** Attribute names in order of preference: current GenAI conventions, then the older ones, then OpenInference and the Vercel AI SDK. */
const KEYS = {
  operation: ['gen_ai.operation.name'],
  model: ['gen_ai.response.model', 'gen_ai.request.model', 'llm.model_name', 'ai.model.id'],
  provider: ['gen_ai.provider.name', 'gen_ai.system', 'llm.provider', 'llm.system', 'ai.model.provider'],
  input: [
    'gen_ai.usage.input_tokens',
    'gen_ai.usage.prompt_tokens',
    'llm.token_count.prompt',
    'ai.usage.promptTokens',
    'ai.usage.inputTokens',
    // The Vercel AI SDK's embedding calls count only input.
    'ai.usage.tokens',
  ],
  output: [
    'gen_ai.usage.output_tokens',
    'gen_ai.usage.completion_tokens',
    'llm.token_count.completion',
    'ai.usage.completionTokens',
    'ai.usage.outputTokens',
  ],
  cacheRead: [
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'gen_ai.usage.input_tokens.cached',
    'llm.token_count.prompt_details.cache_read',
  ],
  cacheWrite: [
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation_input_tokens',
    'gen_ai.usage.input_tokens.cache_write',
    'llm.token_count.prompt_details.cache_write',
  ],
  reasoning: [
    'gen_ai.usage.reasoning.output_tokens',
    'gen_ai.usage.reasoning_tokens',
    'gen_ai.usage.output_tokens.reasoning',
    'llm.token_count.completion_details.reasoning',
  ],
  conversation: ['gen_ai.conversation.id'],
  session: ['session.id', 'gen_ai.session.id', 'ai.telemetry.metadata.sessionId'],
  user: ['user.id', 'enduser.id', 'ai.telemetry.metadata.userId'],
  toolName: ['gen_ai.tool.name', 'tool.name', 'ai.toolCall.name', 'traceloop.entity.name'],
  toolArgs: [
    'gen_ai.tool.call.arguments',
    'tool.parameters',
    'ai.toolCall.args',
    'traceloop.entity.input',
    'input.value',
  ],
  toolResult: ['gen_ai.tool.call.result', 'ai.toolCall.result', 'traceloop.entity.output', 'output.value'],
} as const;

type SpanKind = 'turn' | 'usage' | 'function' | 'skip';

/**
 * The Vercel AI SDK names each span's operation in `ai.operationId`: the model calls are the
 * `….doGenerate` / `….doStream` / `….doEmbed` spans inside an `ai.generateText` (`streamText`,
 * `generateObject`, `embed`, …) span that wraps the steps and repeats a model id and token counts.
 */
function vercelKind(operationId: string): SpanKind {
  if (operationId === 'ai.toolCall') return 'function';
  if (operationId.endsWith('.doEmbed')) return 'usage';
  if (operationId.endsWith('.doGenerate') || operationId.endsWith('.doStream')) return 'turn';
  return 'skip';
}

/** Agent and workflow spans wrap the calls they make (and often repeat their token counts): skipped. */
function spanKind(span: OtelSpan): SpanKind {
  const a = span.attributes;
  const vercel = attrString(a, 'ai.operationId');
  if (vercel !== undefined) return vercelKind(vercel);
  const op = attrString(a, ...KEYS.operation)?.toLowerCase();
  const openInference = attrString(a, 'openinference.span.kind')?.toUpperCase();
  const traceloop = attrString(a, 'traceloop.span.kind')?.toLowerCase();
  const requestType = attrString(a, 'llm.request.type')?.toLowerCase();
  if (op === 'execute_tool' || openInference === 'TOOL' || traceloop === 'tool') return 'function';
  if (a['ai.toolCall.name'] !== undefined) return 'function';
  if (op === 'embeddings' || openInference === 'EMBEDDING' || requestType === 'embedding') return 'usage';
  if (op !== undefined && op !== 'chat' && op !== 'text_completion' && op !== 'generate_content')
    return 'skip';
  if (openInference !== undefined && openInference !== 'LLM') return 'skip';
  if (traceloop !== undefined) return 'skip';
  // The GenAI conventions name the operation and ask for the model only "if available": such a
  // call is a turn without a model (its cost unknown). Spans of the older attributes name no
  // operation, and there only a model tells a model call from any other span.
  if (op !== undefined) return 'turn';
  return attrString(a, ...KEYS.model) === undefined ? 'skip' : 'turn';
}

/** Nanoseconds since the epoch (decimal text) as an ISO time with milliseconds. */
export function nanosToIso(nanos: string): string | undefined {
  if (!/^\d{1,25}$/.test(nanos)) return undefined;
  const ms = Number(BigInt(nanos) / 1_000_000n);
  return ms > 0 && ms < 8.64e15 ? new Date(ms).toISOString() : undefined;
}

function durationMs(span: OtelSpan): number | undefined {
  if (!/^\d{1,25}$/.test(span.startTimeUnixNano) || !/^\d{1,25}$/.test(span.endTimeUnixNano))
    return undefined;
  const ns = BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano);
  return ns >= 0n ? Math.round(Number(ns) / 1e6) : undefined;
}

/** The id of the event a span becomes: the same span sent twice is stored once. */
export function spanEventId(span: Pick<OtelSpan, 'traceId' | 'spanId'>): string {
  return `otel-${span.traceId}-${span.spanId}`;
}

/** Where a span's event goes and under which id: what the receiver and the import preset both store. */
export interface SpanEnvelope {
  eventId: string;
  session: string;
  conversation: string | undefined;
  /** Exactly one of user and device is set. */
  user: string | undefined;
  device: string | undefined;
  /** The span's start; undefined when it has none (the service stamps the event on arrival). */
  timestamp: string | undefined;
}

/** `otel:<service>:<session>`, or where that is longer than an id may be, the same named by its hash. */
function sessionDevice(service: string, session: string): string {
  const readable = `otel:${service}:${session}`;
  if (readable.length <= LIMITS.idLength) return readable;
  return `otel:${createHash('sha256').update(`${service}\0${session}`).digest('hex').slice(0, 40)}`;
}

/**
 * Who and where: `session.id` (span, else resource), else `gen_ai.conversation.id`, else the trace
 * is the session; `user.id`, else a device, since a new session needs one of them: `device.id`
 * (span, else resource), else one of the session's own (`otel:<service.name>:<session>`).
 * Instrumentations often put `user.id` on model calls only: a tool span of a user's session is
 * stored under its device, which the session links to that user, so a device shared by a whole
 * service would give that user every anonymous session of the service, before and after.
 */
function envelope(span: OtelSpan): SpanEnvelope {
  const a = span.attributes;
  const conversation = attrString(a, ...KEYS.conversation) ?? attrString(span.resource, ...KEYS.conversation);
  const session =
    attrString(a, ...KEYS.session) ??
    attrString(span.resource, ...KEYS.session) ??
    conversation ??
    `trace-${span.traceId}`;
  const user = attrString(a, ...KEYS.user) ?? attrString(span.resource, ...KEYS.user);
  const service = attrString(span.resource, 'service.name') ?? 'unknown';
  const device =
    user === undefined
      ? (attrString(a, 'device.id') ??
        attrString(span.resource, 'device.id') ??
        sessionDevice(service, session))
      : undefined;
  return {
    eventId: spanEventId(span),
    session,
    conversation,
    user,
    device,
    timestamp: nanosToIso(span.startTimeUnixNano),
  };
}

/**
 * Token counts in the wire's convention: prompt_tokens counts all input. The GenAI conventions say
 * cache reads and writes SHOULD be included in input_tokens; where a span's cache counts exceed its
 * input (an instrumentation passing Anthropic's input_tokens through as is), they are added back.
 * A count the span does not give stays out (the service prices the call on the other and marks its
 * cost unknown), except for embeddings, which produce no output tokens (`completionDefault`).
 */
function tokens(a: OtelAttributes, completionDefault: number | undefined): Record<string, number> {
  let prompt = attrCount(a, ...KEYS.input);
  const completion = attrCount(a, ...KEYS.output) ?? completionDefault;
  const read = attrCount(a, ...KEYS.cacheRead);
  const written = attrCount(a, ...KEYS.cacheWrite);
  const reasoning = attrCount(a, ...KEYS.reasoning);
  if (prompt === undefined && attrCount(a, ...KEYS.output) === undefined) return {};
  const cached = (read ?? 0) + (written ?? 0);
  if (prompt !== undefined && cached > prompt) prompt += cached;
  return {
    ...(prompt === undefined ? {} : { prompt_tokens: prompt }),
    ...(completion === undefined ? {} : { completion_tokens: completion }),
    ...(read === undefined || prompt === undefined ? {} : { cached_prompt_tokens: read }),
    ...(written === undefined || prompt === undefined ? {} : { cache_creation_tokens: written }),
    ...(reasoning === undefined || completion === undefined || reasoning > completion
      ? {}
      : { reasoning_tokens: reasoning }),
  };
}

function traceProps(span: OtelSpan): Record<string, string> {
  const provider = attrString(span.attributes, ...KEYS.provider);
  return { ...(provider === undefined ? {} : { provider }), trace_id: span.traceId, span_id: span.spanId };
}

/** Why the span failed (status ERROR, or the conventions' `error.type`); undefined when it did not. */
function spanError(span: OtelSpan): string | undefined {
  const failed = span.statusCode === 2 || span.attributes['error.type'] !== undefined;
  if (!failed) return undefined;
  return span.statusMessage || attrString(span.attributes, 'error.type') || 'error';
}

function functionProperties(span: OtelSpan): Record<string, unknown> {
  const a = span.attributes;
  const args = attrString(a, ...KEYS.toolArgs);
  const result = attrString(a, ...KEYS.toolResult);
  const runtime = durationMs(span);
  const callId = attrString(a, 'gen_ai.tool.call.id', 'ai.toolCall.id');
  const error = spanError(span);
  return {
    name: attrString(a, ...KEYS.toolName) ?? span.name.replace(/^execute_tool\s+/, ''),
    ...(args === undefined ? {} : { args }),
    ...(result === undefined ? {} : { result }),
    ...(runtime === undefined ? {} : { runtime }),
    ...(callId === undefined ? {} : { call_id: callId }),
    ...(error === undefined ? {} : { error }),
    ...traceProps(span),
  };
}

/** What one span is, before it is written as a wire event: the import preset builds its records from it. */
export type SpanRecord =
  | { kind: 'turn' | 'usage' | 'function'; envelope: SpanEnvelope; properties: Record<string, unknown> }
  | { kind: 'skip'; reason: string };

/** One span's record; spans that are not GenAI calls (HTTP, database, agent wrappers) are skipped. */
export function genAiSpanRecord(span: OtelSpan): SpanRecord {
  const kind = spanKind(span);
  if (kind === 'skip') return { kind, reason: 'not a GenAI model call or tool execution' };
  if (kind === 'function') return { kind, envelope: envelope(span), properties: functionProperties(span) };
  const a = span.attributes;
  const model = attrString(a, ...KEYS.model);
  if (kind === 'usage') {
    const counted = tokens(a, 0);
    if (model === undefined || counted.prompt_tokens === undefined) {
      return { kind: 'skip', reason: 'an embeddings call without model or token counts' };
    }
    return { kind, envelope: envelope(span), properties: { model, ...counted, ...traceProps(span) } };
  }
  const texts = genAiText(span);
  const assistant = outputText(texts.output) ?? '';
  if (assistant === '' && asksForTools(span)) {
    // As the API-log presets have it: a call that only asks for tools is no turn (the call that
    // answers after the tools ran is); its tokens are still spent, so it is a usage record.
    const counted = tokens(a, undefined);
    if (model === undefined || Object.keys(counted).length === 0) {
      return {
        kind: 'skip',
        reason: 'a model call that only asked for tools, without model or token counts',
      };
    }
    return {
      kind: 'usage',
      envelope: envelope(span),
      properties: { model, ...counted, ...traceProps(span) },
    };
  }
  // A call that failed (rate limited, refused) is still a user's turn, marked as functions are.
  const error = spanError(span);
  const properties = {
    user: lastUserText(texts.input) ?? '',
    assistant,
    ...(model === undefined ? {} : { model }),
    ...tokens(a, undefined),
    ...(error === undefined ? {} : { error }),
    ...traceProps(span),
  };
  return { kind, envelope: envelope(span), properties };
}

const NAMES = {
  turn: EVENT_NAMES.conversationTurn,
  usage: EVENT_NAMES.conversationUsage,
  function: EVENT_NAMES.conversationFunction,
} as const;

/** Maps one span to the wire event the receiver stores; spans that are not GenAI calls are skipped. */
export function mapGenAiSpan(span: OtelSpan): SpanMapping {
  const r = genAiSpanRecord(span);
  if (r.kind === 'skip') return r;
  const e = r.envelope;
  const event = {
    type: 'track',
    event_id: e.eventId,
    session_id: e.session,
    ...(e.conversation === undefined ? {} : { conversation_id: e.conversation }),
    ...(e.user === undefined ? { device_id: e.device } : { user_id: e.user }),
    ...(e.timestamp === undefined ? {} : { timestamp: e.timestamp }),
    event: NAMES[r.kind],
    properties: r.properties,
  };
  return { kind: r.kind, event };
}
