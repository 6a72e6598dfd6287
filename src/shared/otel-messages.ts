import type { OtelAttributes, OtelSpan, OtelValue } from './otel-genai.js';

/** A chat message reduced to what a turn stores: its role and its text. */
export interface ChatText {
  role: string;
  text: string;
}

function parseMaybeJson(value: OtelValue | undefined): OtelValue | undefined {
  if (typeof value !== 'string') return value;
  const t = value.trim();
  if (!t.startsWith('[') && !t.startsWith('{')) return value;
  try {
    return JSON.parse(t) as OtelValue;
  } catch {
    return value;
  }
}

const isRecord = (v: OtelValue | undefined): v is { [key: string]: OtelValue } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The text of a message's content in the shapes instrumentations write: a string, GenAI `parts`
 * (`{type: 'text', content}`), OpenAI-style content arrays (`{type: 'text', text}`), Anthropic blocks.
 */
function contentText(content: OtelValue | undefined): string | undefined {
  const value = parseMaybeJson(content);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const texts = value.flatMap((part) => {
      if (typeof part === 'string') return [part];
      if (!isRecord(part) || (part.type !== undefined && part.type !== 'text')) return [];
      const text = part.content ?? part.text;
      return typeof text === 'string' ? [text] : [];
    });
    return texts.length > 0 ? texts.join('\n') : undefined;
  }
  if (isRecord(value)) return contentText(value.content ?? value.text ?? value.parts);
  return undefined;
}

function messageOf(raw: OtelValue, fallbackRole: string): ChatText | undefined {
  if (typeof raw === 'string') return { role: fallbackRole, text: raw };
  if (!isRecord(raw)) return undefined;
  const inner = isRecord(raw.message) ? raw.message : raw;
  const text = contentText(inner.parts ?? inner.content ?? inner.text);
  if (text === undefined) return undefined;
  return { role: typeof inner.role === 'string' ? inner.role : fallbackRole, text };
}

function messageList(value: OtelValue | undefined, fallbackRole: string): ChatText[] | undefined {
  const parsed = parseMaybeJson(value);
  if (parsed === undefined) return undefined;
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const out = list.flatMap((m) => messageOf(m, fallbackRole) ?? []);
  return out.length > 0 ? out : undefined;
}

/** `prefix.N.role` / `prefix.N.content` flattened attributes (OpenLLMetry, OpenInference), in N order. */
function indexed(a: OtelAttributes, prefix: string, role: string, content: string, fallbackRole: string) {
  const found = new Map<number, ChatText>();
  const pattern = new RegExp(
    `^${prefix.replaceAll('.', '\\.')}\\.(\\d+)\\.${content.replaceAll('.', '\\.')}$`,
  );
  for (const [key, value] of Object.entries(a)) {
    const m = pattern.exec(key);
    if (!m) continue;
    const n = Number(m[1]);
    const text = contentText(value);
    if (text === undefined) continue;
    const r = a[`${prefix}.${n}.${role}`];
    found.set(n, { role: typeof r === 'string' ? r : fallbackRole, text });
  }
  const out = [...found.entries()].sort(([x], [y]) => x - y).map(([, m]) => m);
  return out.length > 0 ? out : undefined;
}

/** Older conventions put messages on span events (`gen_ai.user.message`, `gen_ai.choice`, ...). */
function fromEvents(span: OtelSpan): { input?: ChatText[]; output?: ChatText[] } {
  const input: ChatText[] = [];
  const output: ChatText[] = [];
  for (const e of span.events) {
    const a = e.attributes;
    if (e.name === 'gen_ai.choice') {
      const m = messageOf(parseMaybeJson(a.message) ?? null, 'assistant') ?? messageOf(a, 'assistant');
      if (m) output.push(m);
    } else if (e.name === 'gen_ai.content.prompt') {
      input.push(...(messageList(a['gen_ai.prompt'], 'user') ?? []));
    } else if (e.name === 'gen_ai.content.completion') {
      output.push(...(messageList(a['gen_ai.completion'], 'assistant') ?? []));
    } else if (e.name === 'gen_ai.client.inference.operation.details') {
      // The current conventions' event form of the span's gen_ai.input/output.messages attributes.
      input.push(...(messageList(a['gen_ai.input.messages'], 'user') ?? []));
      output.push(...(messageList(a['gen_ai.output.messages'], 'assistant') ?? []));
    } else if (/^gen_ai\.(user|system|assistant|tool)\.message$/.test(e.name)) {
      const role = e.name.split('.')[1] ?? 'user';
      const m = messageOf(a, role);
      if (m) input.push({ ...m, role: typeof a.role === 'string' ? a.role : role });
    }
  }
  return {
    ...(input.length > 0 ? { input } : {}),
    ...(output.length > 0 ? { output } : {}),
  };
}

/** The span's input and output messages, from whichever convention the instrumentation wrote. */
export function genAiText(span: OtelSpan): { input: ChatText[]; output: ChatText[] } {
  const a = span.attributes;
  const events = fromEvents(span);
  const input =
    messageList(a['gen_ai.input.messages'], 'user') ??
    indexed(a, 'gen_ai.prompt', 'role', 'content', 'user') ??
    indexed(a, 'llm.input_messages', 'message.role', 'message.content', 'user') ??
    messageList(a['ai.prompt.messages'], 'user') ??
    events.input ??
    messageList(a['input.value'] ?? a['gen_ai.prompt'] ?? a['ai.prompt'], 'user') ??
    [];
  const output =
    messageList(a['gen_ai.output.messages'], 'assistant') ??
    indexed(a, 'gen_ai.completion', 'role', 'content', 'assistant') ??
    indexed(a, 'llm.output_messages', 'message.role', 'message.content', 'assistant') ??
    events.output ??
    messageList(a['ai.response.text'] ?? a['output.value'] ?? a['gen_ai.completion'], 'assistant') ??
    [];
  return { input, output };
}

/** Finish reasons of a reply that calls tools (OpenAI, the GenAI conventions, Anthropic; the Vercel AI SDK's `tool-calls`). */
const TOOL_FINISH = new Set(['tool_calls', 'tool_call', 'function_call', 'tool_use']);
const callsTools = (reason: OtelValue | undefined): boolean =>
  typeof reason === 'string' && TOOL_FINISH.has(reason.toLowerCase().replaceAll('-', '_'));

/** OpenLLMetry's `gen_ai.completion.N.finish_reason`, flattened like its messages. */
const COMPLETION_FINISH = /^gen_ai\.completion\.\d+\.finish_reason$/;
/** A tool call among the flattened output messages: OpenLLMetry's and OpenInference's. */
const FLAT_TOOL_CALL =
  /^(gen_ai\.completion\.\d+\.(tool_calls|function_call)|llm\.output_messages\.\d+\.message\.tool_calls)\./;

const hasToolCalls = (m: OtelValue | undefined): boolean =>
  isRecord(m) && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;

/**
 * Whether the model answered by calling tools: a finish reason saying so
 * (`gen_ai.response.finish_reasons`, an output message's `finish_reason`, OpenLLMetry's
 * `gen_ai.completion.N.finish_reason`, a `gen_ai.choice` event's), a `tool_call` part among the
 * output messages, or a tool call among OpenLLMetry's or OpenInference's flattened output messages or
 * on a `gen_ai.choice` event. Only the current conventions' and the Vercel AI SDK's forms were read,
 * so a tool round of the others was an empty turn (found by probing).
 */
export function asksForTools(span: OtelSpan): boolean {
  const a = span.attributes;
  const reasons = parseMaybeJson(a['gen_ai.response.finish_reasons']);
  if ((Array.isArray(reasons) ? reasons : [reasons]).some(callsTools)) return true;
  if (callsTools(a['ai.response.finishReason'])) return true;
  for (const [key, value] of Object.entries(a)) {
    if ((COMPLETION_FINISH.test(key) && callsTools(value)) || FLAT_TOOL_CALL.test(key)) return true;
  }
  for (const e of span.events) {
    if (e.name !== 'gen_ai.choice') continue;
    const m = parseMaybeJson(e.attributes.message);
    if (callsTools(e.attributes.finish_reason) || hasToolCalls(m) || hasToolCalls(e.attributes)) return true;
  }
  const details = span.events.find((e) => e.name === 'gen_ai.client.inference.operation.details');
  const output = parseMaybeJson(a['gen_ai.output.messages'] ?? details?.attributes['gen_ai.output.messages']);
  return (Array.isArray(output) ? output : [output]).some(
    (m) =>
      isRecord(m) &&
      (callsTools(m.finish_reason) ||
        (Array.isArray(m.parts) && m.parts.some((p) => isRecord(p) && p.type === 'tool_call'))),
  );
}

/** The user's side of a turn: the last user message of the input (earlier ones are history). */
export function lastUserText(input: readonly ChatText[]): string | undefined {
  for (let i = input.length - 1; i >= 0; i--) if (input[i]?.role === 'user') return input[i]?.text;
  return undefined;
}

/** The assistant's side: the first output message (a choice of several is the first choice). */
export function outputText(output: readonly ChatText[]): string | undefined {
  return output[0]?.text;
}
