import { assembleChunks } from './chat-chunks.js';
import { arr, jsonText, type Obj, obj, openaiUsage, secondsMs, str, textOf, type Usage } from './fields.js';
import type { Preset, PresetMapper } from './preset.js';
import { callEventId, type PresetItem, type PresetRecord, toolCallItems } from './record.js';
import { type HistoryItem, turnUser } from './turn-user.js';

/**
 * JSON Lines logs of Chat Completions calls, `{request, response}` (a bare `chat.completion` object
 * is a response without its request), and Batch API output lines `{custom_id, response: {status_code,
 * body}}`, whose requests come from the batch's input file (`{custom_id, body}` lines) when it is
 * imported in the same run. Each call whose reply has text → a turn: the request's last user message
 * (its text; a message of only images has none; with those of the turn's earlier tool rounds,
 * `turnUser`) and the reply, at the response's `created` (a line
 * without it is rejected: an import never invents a time), with its usage (`batch: true` for batch
 * output). The tool calls that message started or interrupted (see
 * `ownFrom`), with their `tool` answers → function calls of that turn, so a later call repeating the
 * history counts none of them again. A call that only asks for tools → a usage record, so its
 * tokens are counted. Ids: `request.user` or `metadata.user_id`, `metadata.session_id`,
 * `metadata.conversation_id`; otherwise sessions are derived per user (`--set user_id=`). Event ids
 * come from the response's `id` (`callEventId`).
 */
export const openaiChat: Preset = {
  name: 'openai-chat',
  label: 'OpenAI Chat Completions log',
  container: 'lines',
  twoPass: true,
  create,
};

function create(): PresetMapper {
  const batchRequests = new Map<string, Obj>();
  return {
    observe(value) {
      // A batch input line: its request, kept for the output line of the same custom_id.
      const line = obj(value);
      const id = str(line?.custom_id);
      const body = obj(line?.body);
      if (id === undefined || !body || !Array.isArray(body.messages)) return;
      // Only what the output line's turn reads is kept: the history before the call's own part is not.
      const last = lastUserIndex(body.messages);
      const start = turnUser(body.messages.map(historyItem)).start;
      const keep = last === -1 ? 0 : Math.min(start, last, ownFrom(body.messages, last));
      const messages = body.messages.slice(keep);
      batchRequests.set(id, { model: body.model, user: body.user, metadata: body.metadata, messages });
    },
    map(value) {
      const line = obj(value);
      if (!line) return [{ ok: false, at: '', reason: 'expected a JSON object' }];
      const customId = str(line.custom_id);
      if (customId !== undefined && obj(line.body)) return []; // a batch input line, read by observe
      if (customId !== undefined) {
        const response = obj(line.response);
        const status = response?.status_code;
        if (!response || (status !== undefined && status !== 200)) {
          const why = str(obj(line.error)?.message) ?? `status_code ${String(status)}`;
          return [{ ok: false, at: 'response', reason: `the batch request failed: ${why}` }];
        }
        return mapCall(batchRequests.get(customId) ?? {}, obj(response.body), 'response.body', true, line);
      }
      if (line.object === 'chat.completion') return mapCall({}, line, '', false, line);
      if (line.object === 'chat.completion.chunk') {
        const reason =
          'one chunk of a streamed call: log the call whole, its chunks as a list in "response" (or the completion they make)';
        return [{ ok: false, at: '', reason }];
      }
      const streamed = Array.isArray(line.response) ? assembleChunks(line.response) : undefined;
      if (typeof streamed === 'string') return [{ ok: false, at: 'response', reason: streamed }];
      return mapCall(obj(line.request) ?? {}, streamed ?? obj(line.response), 'response', false, line);
    },
  };
}

export function usageProperties(u: Usage, batch: boolean): Record<string, unknown> {
  return { ...u, batch: batch ? true : undefined };
}

function mapCall(
  request: Obj,
  response: Obj | undefined,
  at: string,
  batch: boolean,
  raw: Obj,
): PresetItem[] {
  if (!response) return [{ ok: false, at, reason: 'no response in this line' }];
  const choice = obj(arr(response.choices)[0]);
  const message = obj(choice?.message);
  if (!message) return [{ ok: false, at, reason: 'the response has no choices[0].message' }];
  const ms = secondsMs(response.created);
  if (ms === undefined) {
    const created = response.created;
    const reason =
      created === undefined || created === null
        ? 'missing: the time of the call, which an import never invents'
        : `${JSON.stringify(created)} is not a time in epoch seconds`;
    return [{ ok: false, at: at === '' ? 'created' : `${at}.created`, reason }];
  }
  const metadata = obj(request.metadata);
  // A batch output line's request is its input line's body.
  const place = batch ? "the batch input's body." : 'request.';
  const ids = {
    user: str(request.user) ?? str(metadata?.user_id),
    session: str(metadata?.session_id),
    conversation: str(metadata?.conversation_id),
    idPaths: {
      user_id: `${place}${str(request.user) !== undefined ? 'user' : 'metadata.user_id'}`,
      session_id: `${place}metadata.session_id`,
      conversation_id: `${place}metadata.conversation_id`,
    },
  };
  const model = str(response.model) ?? str(request.model);
  const usage = usageProperties(openaiUsage(response.usage), batch);
  const eventId = (part?: string) => callEventId('openai-chat', str(response.id), raw, part);
  // A reply that calls tools waits for their results: its text, if any, is a preamble.
  const reply = asksForTools(choice, message) ? undefined : (textOf(message.content) ?? str(message.refusal));
  if (reply === undefined) {
    if (usage.prompt_tokens === undefined || model === undefined) return [];
    const properties = { model, ...usage };
    return [{ ok: true, record: { kind: 'usage', at, ms, ...ids, eventId: eventId(), properties, raw } }];
  }
  const messages = arr(request.messages);
  const last = lastUserIndex(messages);
  const turn: PresetRecord = {
    kind: 'turn',
    at,
    ms,
    ...ids,
    eventId: eventId(),
    properties: {
      user: turnUser(messages.map(historyItem)).text,
      assistant: reply,
      assistant_id: str(response.id),
      model,
      ...usage,
    },
    raw,
  };
  const from = ownFrom(messages, last);
  const calls = toolCallItems(toolCalls(messages.slice(from), from), { ms, ids, raw, eventId });
  return [...calls, { ok: true, record: turn }];
}

function historyItem(value: unknown): HistoryItem {
  const m = obj(value);
  if (m?.role === 'user') return { kind: 'user', text: textOf(m.content) };
  if (m?.role !== 'assistant') return { kind: 'other' };
  return { kind: arr(m.tool_calls).length > 0 || obj(m.function_call) !== undefined ? 'tools' : 'reply' };
}

/** The request's last user message, whatever its content (an image alone is the user's turn too). */
function lastUserIndex(messages: unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (obj(messages[i])?.role === 'user') return i;
  return -1;
}

/**
 * Where a logged call's own tool calls start (openai-chat and anthropic): at the last assistant message
 * before its last user message (a tool round that message interrupted or, in Anthropic's form, answers
 * along with its text, which no call that ended in a reply counted), else after that user message.
 * Tool calls before it were counted by an earlier call that the request's history repeats.
 */
export function ownFrom(messages: unknown[], last: number): number {
  for (let i = last - 1; i >= 0; i--) if (obj(messages[i])?.role === 'assistant') return i;
  return last + 1;
}

/** A reply calling tools: `tool_calls`, or the legacy `function_call` (finish reason or message). */
function asksForTools(choice: Obj | undefined, message: Obj): boolean {
  const finish = choice?.finish_reason;
  if (finish === 'tool_calls' || finish === 'function_call') return true;
  return arr(message.tool_calls).length > 0 || obj(message.function_call) !== undefined;
}

/** The legacy answer to the `function_call` of message `i`: the `role: "function"` message after it. */
function functionResult(messages: unknown[], i: number, name: string): string | undefined {
  for (let k = i + 1; k < messages.length; k++) {
    const m = obj(messages[k]);
    if (m?.role === 'assistant' || m?.role === 'user') return undefined;
    if (m?.role === 'function' && (m.name === undefined || m.name === name))
      return textOf(m.content) ?? jsonText(m.content);
  }
  return undefined;
}

/**
 * Assistant `tool_calls` in these messages, with their `tool` answers, and legacy `function_call`s
 * (no id: one per message), with the `role: "function"` message answering each.
 */
function toolCalls(messages: unknown[], offset: number): Array<{ at: string; properties: Obj }> {
  const out: Array<{ at: string; properties: Obj }> = [];
  const results = new Map<string, string | undefined>();
  for (const value of messages) {
    const m = obj(value);
    const id = str(m?.tool_call_id);
    if (m?.role === 'tool' && id !== undefined) results.set(id, textOf(m.content) ?? jsonText(m.content));
  }
  messages.forEach((value, i) => {
    const m = obj(value);
    if (m?.role !== 'assistant') return;
    arr(m.tool_calls).forEach((v, j) => {
      const call = obj(v);
      const fn = obj(call?.function);
      const name = str(fn?.name);
      if (name === undefined) return;
      const id = str(call?.id);
      out.push({
        at: `request.messages[${offset + i}].tool_calls[${j}]`,
        properties: {
          name,
          args: jsonText(fn?.arguments),
          result: id === undefined ? undefined : results.get(id),
          call_id: id,
        },
      });
    });
    const fn = obj(m.function_call);
    const name = str(fn?.name);
    if (name === undefined) return;
    out.push({
      at: `request.messages[${offset + i}].function_call`,
      properties: { name, args: jsonText(fn?.arguments), result: functionResult(messages, i, name) },
    });
  });
  return out;
}
