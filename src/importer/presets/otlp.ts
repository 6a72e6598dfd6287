import { arr, count, type Obj, obj, str, textOf } from './fields.js';
import type { Preset } from './preset.js';
import type { PresetItem, PresetRecord } from './record.js';

/**
 * OTLP/JSON trace files (`{resourceSpans: [{resource, scopeSpans: [{spans}]}]}`, one document or one
 * per line as the collector's file exporter writes them) with OpenTelemetry's GenAI conventions, the
 * older `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` / `gen_ai.usage.prompt_tokens` attributes
 * (OpenLLMetry) and OpenInference's `llm.*`. A `chat` / `text_completion` / `generate_content` span
 * (OpenInference: kind LLM) → a turn at the span's start, its text empty when the instrumentation
 * did not capture content, or a usage record when it only asks for tools; an `execute_tool` span
 * (OpenInference: TOOL) → a function call whose runtime is the span's duration. Other spans are not
 * records. Ids: `session.id` (else `gen_ai.conversation.id`) names the session,
 * `gen_ai.conversation.id` the conversation, `user.id` the user, on the span or its resource; each
 * record carries `trace_id` and `span_id`, so two spans never collapse into one.
 */
export const otlp: Preset = {
  name: 'otlp',
  label: 'OTLP trace',
  container: 'document',
  twoPass: false,
  create: () => ({ map: mapTraces }),
};

type Attributes = Map<string, unknown>;

/** An OTLP AnyValue as plain JSON (int64 written as a string becomes a number when it is safe). */
export function anyValue(v: unknown): unknown {
  const o = obj(v);
  if (!o) return undefined;
  if ('stringValue' in o) return o.stringValue;
  if ('boolValue' in o) return o.boolValue;
  if ('intValue' in o)
    return count(o.intValue) ?? (typeof o.intValue === 'string' ? Number(o.intValue) : o.intValue);
  if ('doubleValue' in o) return o.doubleValue;
  if ('arrayValue' in o) return arr(obj(o.arrayValue)?.values).map(anyValue);
  if ('kvlistValue' in o) return Object.fromEntries(attributes(obj(o.kvlistValue)?.values));
  return undefined;
}

function attributes(list: unknown, into: Attributes = new Map()): Attributes {
  for (const kv of arr(list)) {
    const key = str(obj(kv)?.key);
    if (key !== undefined) into.set(key, anyValue(obj(kv)?.value));
  }
  return into;
}

/** Both spellings of OTLP/JSON's fields: lowerCamelCase (the spec's) and the protobuf names. */
const field = (o: Obj | undefined, camel: string, snake: string): unknown => o?.[camel] ?? o?.[snake];

/** Every span of an OTLP/JSON `ExportTraceServiceRequest` → records (the receiver's mapping too). */
export function mapTraces(value: unknown): PresetItem[] {
  const doc = obj(value);
  const resources = field(doc, 'resourceSpans', 'resource_spans');
  if (!Array.isArray(resources))
    return [{ ok: false, at: '', reason: 'not an OTLP trace document: no resourceSpans' }];
  const out: PresetItem[] = [];
  resources.forEach((r, i) => {
    const resource = attributes(obj(obj(r)?.resource)?.attributes);
    arr(field(obj(r), 'scopeSpans', 'scope_spans')).forEach((s, j) => {
      arr(obj(s)?.spans).forEach((span, k) => {
        const item = mapSpan(obj(span), resource, `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`);
        if (item) out.push(item);
      });
    });
  });
  return out;
}

const TURN_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'completion']);

function nanosMs(v: unknown): number | undefined {
  const text = typeof v === 'number' ? String(v) : v;
  if (typeof text !== 'string' || !/^\d{1,25}$/.test(text) || /^0+$/.test(text)) return undefined;
  return Number(BigInt(text) / 1_000_000n);
}

function mapSpan(span: Obj | undefined, resource: Attributes, at: string): PresetItem | undefined {
  if (!span) return undefined;
  const a = attributes(span.attributes, new Map(resource));
  const get = (...keys: string[]): unknown =>
    keys.map((k) => a.get(k)).find((v) => v !== undefined && v !== '');
  const text = (...keys: string[]): string | undefined => {
    const v = get(...keys);
    return typeof v === 'string' ? v : undefined;
  };
  const op = text('gen_ai.operation.name', 'llm.request.type');
  const kind = text('openinference.span.kind')?.toUpperCase();
  const isTurn = (op !== undefined && TURN_OPERATIONS.has(op)) || kind === 'LLM';
  const isTool = op === 'execute_tool' || kind === 'TOOL';
  if (!isTurn && !isTool) return undefined;
  const ms = nanosMs(field(span, 'startTimeUnixNano', 'start_time_unix_nano'));
  const end = nanosMs(field(span, 'endTimeUnixNano', 'end_time_unix_nano'));
  const conversation = text('gen_ai.conversation.id');
  const ids = {
    session: text('session.id') ?? conversation,
    conversation,
    user: text('user.id', 'enduser.id'),
  };
  const trace = {
    trace_id: str(field(span, 'traceId', 'trace_id')),
    span_id: str(field(span, 'spanId', 'span_id')),
  };
  const failed = obj(span.status)?.code === 2 || obj(span.status)?.code === 'STATUS_CODE_ERROR';
  if (isTool) {
    const properties = {
      name: text('gen_ai.tool.name', 'tool.name') ?? str(span.name) ?? 'tool',
      args: json(get('gen_ai.tool.call.arguments', 'tool.parameters', 'input.value')),
      result: json(get('gen_ai.tool.call.result', 'output.value')),
      runtime: ms !== undefined && end !== undefined && end >= ms ? end - ms : undefined,
      call_id: text('gen_ai.tool.call.id'),
      success: failed ? false : undefined,
      ...trace,
    };
    return { ok: true, record: { kind: 'function', at, ms, ...ids, properties, raw: span } };
  }
  const usage = tokens(get);
  const model = text('gen_ai.response.model', 'gen_ai.request.model', 'llm.model_name', 'llm.response.model');
  const output = outputOf(a);
  if (output.toolsOnly) {
    if (usage.prompt_tokens === undefined || model === undefined) return undefined;
    return {
      ok: true,
      record: { kind: 'usage', at, ms, ...ids, properties: { model, ...usage, ...trace }, raw: span },
    };
  }
  const record: PresetRecord = {
    kind: 'turn',
    at,
    ms,
    ...ids,
    properties: {
      user: inputOf(a) ?? '',
      assistant: output.text ?? '',
      assistant_id: text('gen_ai.response.id') ?? trace.span_id,
      model,
      ...usage,
      ...trace,
    },
    raw: span,
  };
  return { ok: true, record };
}

const json = (v: unknown): string | undefined =>
  v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);

/**
 * Token counts under the three conventions. OpenTelemetry's input tokens include cached ones (as
 * the wire's prompt_tokens do); an instrumentation whose cache counts exceed its input reports them
 * apart (Anthropic's way), so they are added back.
 */
function tokens(get: (...keys: string[]) => unknown) {
  let prompt = count(
    get('gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.token_count.prompt'),
  );
  const cached = count(
    get(
      'gen_ai.usage.cache_read.input_tokens',
      'gen_ai.usage.cache_read_input_tokens',
      'llm.token_count.prompt_details.cache_read',
    ),
  );
  const created = count(
    get(
      'gen_ai.usage.cache_creation.input_tokens',
      'gen_ai.usage.cache_creation_input_tokens',
      'llm.token_count.prompt_details.cache_write',
    ),
  );
  const reasoning = count(
    get(
      'gen_ai.usage.reasoning.output_tokens',
      'gen_ai.usage.reasoning_tokens',
      'llm.token_count.completion_details.reasoning',
    ),
  );
  if (prompt !== undefined && (cached ?? 0) + (created ?? 0) > prompt)
    prompt += (cached ?? 0) + (created ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: count(
      get('gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens', 'llm.token_count.completion'),
    ),
    cached_prompt_tokens: cached || undefined,
    cache_creation_tokens: created || undefined,
    reasoning_tokens: reasoning || undefined,
  };
}

/** Messages of `gen_ai.input.messages` / `gen_ai.output.messages`: JSON text or already structured. */
function messages(v: unknown): Obj[] {
  let value = v;
  if (typeof v === 'string') {
    try {
      value = JSON.parse(v);
    } catch {
      return [];
    }
  }
  return arr(value).flatMap((m) => (obj(m) ? [obj(m)!] : []));
}

/** The numbered `<prefix>.N.<role>` / `<prefix>.N.<content>` attributes as messages, in order. */
function numbered(
  a: Attributes,
  prefix: string,
  role: string,
  content: string,
): Array<{ role: unknown; text: unknown }> {
  const out: Array<{ role: unknown; text: unknown }> = [];
  for (let n = 0; a.has(`${prefix}.${n}.${role}`) || a.has(`${prefix}.${n}.${content}`); n++)
    out.push({ role: a.get(`${prefix}.${n}.${role}`), text: a.get(`${prefix}.${n}.${content}`) });
  return out;
}

function inputOf(a: Attributes): string | undefined {
  const structured = messages(a.get('gen_ai.input.messages')).filter((m) => m.role === 'user');
  const last = structured[structured.length - 1];
  if (last) return textOf(last.parts) ?? textOf(last.content);
  for (const [prefix, role, content] of [
    ['gen_ai.prompt', 'role', 'content'],
    ['llm.input_messages', 'message.role', 'message.content'],
  ] as const) {
    const users = numbered(a, prefix, role, content).filter((m) => m.role === 'user');
    const text = users[users.length - 1]?.text;
    if (typeof text === 'string') return text;
  }
  return a.get('input.mime_type') === 'text/plain' ? str(a.get('input.value')) : undefined;
}

function outputOf(a: Attributes): { text: string | undefined; toolsOnly: boolean } {
  const reasons = arr(a.get('gen_ai.response.finish_reasons'));
  const structured = messages(a.get('gen_ai.output.messages'));
  let text: string | undefined;
  let calls = false;
  if (structured.length > 0) {
    const parts = structured.flatMap((m) => arr(m.parts));
    text = textOf(parts);
    calls = parts.some((p) => obj(p)?.type === 'tool_call');
  } else {
    const first = a.get('gen_ai.completion.0.content') ?? a.get('llm.output_messages.0.message.content');
    text = typeof first === 'string' ? first : undefined;
    calls =
      a.has('gen_ai.completion.0.tool_calls.0.name') ||
      a.has('llm.output_messages.0.message.tool_calls.0.tool_call.function.name');
    if (text === undefined && a.get('output.mime_type') === 'text/plain') text = str(a.get('output.value'));
  }
  const toolsOnly =
    (calls && text === undefined) || reasons.some((r) => r === 'tool_calls' || r === 'tool_use');
  return { text, toolsOnly };
}
