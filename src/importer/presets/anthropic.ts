import { parseTimestamp } from '../timestamps.js';
import { anthropicUsage, arr, jsonText, type Obj, obj, str, textOf } from './fields.js';
import { ownFrom, usageProperties } from './openai-chat.js';
import type { Preset, PresetMapper, PresetOptions } from './preset.js';
import { callEventId, type PresetItem, type PresetRecord, toolCallItems } from './record.js';
import { type HistoryItem, turnUser } from './turn-user.js';

/**
 * JSON Lines logs of Anthropic Messages API calls: `{request, response}` (a bare `message` object is
 * a response without its request) and Message Batches results `{custom_id, result: {type, message}}`.
 * A response has no time of its own, so the line's `timestamp` or `created_at` (ISO 8601 or epoch;
 * a time without a zone is read in `--tz`) gives it; a line without one is rejected (an import never
 * invents a time: Message Batches results need a time added to each line). Each call whose reply is
 * final (its `stop_reason` is not `tool_use`) → a turn: the request's last user message (its text
 * blocks; a message of only images has none; with those of the turn's earlier tool rounds, `turnUser`)
 * and the reply's text blocks, with usage converted to the
 * wire's convention (`input_tokens` excludes cache writes and reads; `prompt_tokens` is their sum); the `tool_use` blocks that message started or answered
 * (see `ownFrom`) and their `tool_result` answers → function calls of the turn, so a later call
 * repeating the history counts none of them again; a call that only asks for tools → a usage record.
 * Ids: `metadata.user_id` (else `--set user_id=`), sessions derived per user; event ids from the
 * message's `id` (`callEventId`).
 */
export const anthropic: Preset = {
  name: 'anthropic',
  label: 'Anthropic Messages log',
  container: 'lines',
  twoPass: false,
  create,
};

function create({ tz }: PresetOptions): PresetMapper {
  return {
    map(value) {
      const line = obj(value);
      if (!line) return [{ ok: false, at: '', reason: 'expected a JSON object' }];
      const absent = (v: unknown) => v === undefined || v === null;
      const field = absent(line.timestamp) && !absent(line.created_at) ? 'created_at' : 'timestamp';
      const time = parseTimestamp(line[field], tz);
      if (time && !time.ok) return [{ ok: false, at: field, reason: time.reason }];
      const ms = time?.ms;
      if (line.type === 'message') return mapCall({}, line, '', ms, false, line);
      const result = obj(line.result);
      if (str(line.custom_id) !== undefined && result) {
        if (result.type !== 'succeeded')
          return [{ ok: false, at: 'result', reason: `the batch request ${String(result.type)}` }];
        return mapCall(obj(line.request) ?? {}, obj(result.message), 'result.message', ms, true, line);
      }
      return mapCall(obj(line.request) ?? {}, obj(line.response), 'response', ms, false, line);
    },
  };
}

const isText = (b: unknown): boolean => obj(b)?.type === 'text' || typeof b === 'string';

function mapCall(
  request: Obj,
  response: Obj | undefined,
  at: string,
  ms: number | undefined,
  batch: boolean,
  raw: Obj,
): PresetItem[] {
  if (!response) return [{ ok: false, at, reason: 'no response in this line' }];
  if (ms === undefined) {
    const reason = 'missing (and no created_at): the time of the call, which an import never invents';
    return [{ ok: false, at: 'timestamp', reason }];
  }
  const ids = {
    user: str(obj(request.metadata)?.user_id),
    idPaths: { user_id: 'request.metadata.user_id' },
  };
  const model = str(response.model) ?? str(request.model);
  const usage = usageProperties(anthropicUsage(response.usage), batch);
  const eventId = (part?: string) => callEventId('anthropic', str(response.id), raw, part);
  const content = arr(response.content);
  const final = response.stop_reason !== 'tool_use' && !content.some((b) => obj(b)?.type === 'tool_use');
  const reply = final ? textOf(content.filter(isText)) : undefined;
  if (reply === undefined) {
    if (usage.prompt_tokens === undefined || model === undefined) return [];
    const properties = { model, ...usage };
    return [{ ok: true, record: { kind: 'usage', at, ms, ...ids, eventId: eventId(), properties, raw } }];
  }
  const messages = arr(request.messages);
  const last = lastUserIndex(messages);
  // A request ending in the assistant's words is a prefill: the reply continues it (Messages API).
  const prefill = prefillText(messages);
  const turn: PresetRecord = {
    kind: 'turn',
    at,
    ms,
    ...ids,
    eventId: eventId(),
    properties: {
      user: turnUser(messages.map(historyItem)).text,
      assistant: prefill + reply,
      assistant_id: str(response.id),
      model,
      ...usage,
    },
    raw,
  };
  const calls = toolCallItems(toolUses(messages, ownFrom(messages, last)), { ms, ids, raw, eventId });
  return [...calls, { ok: true, record: turn }];
}

const isToolResult = (b: unknown): boolean => obj(b)?.type === 'tool_result';

/** The text of a last message of the assistant's that asks for no tools: a prefill ('' without one). */
function prefillText(messages: readonly unknown[]): string {
  const m = obj(messages.at(-1));
  if (m?.role !== 'assistant' || historyItem(m).kind !== 'reply') return '';
  return typeof m.content === 'string' ? m.content : (textOf(arr(m.content).filter(isText)) ?? '');
}

/** A user message of only `tool_result` blocks is the tools answering, not the user. */
function historyItem(value: unknown): HistoryItem {
  const m = obj(value);
  const content = m?.content;
  if (m?.role === 'assistant')
    return { kind: arr(content).some((b) => obj(b)?.type === 'tool_use') ? 'tools' : 'reply' };
  if (m?.role !== 'user') return { kind: 'other' };
  if (Array.isArray(content) && content.length > 0 && content.every(isToolResult)) return { kind: 'other' };
  return { kind: 'user', text: typeof content === 'string' ? content : textOf(arr(content).filter(isText)) };
}

/**
 * The last message the user wrote, whatever its content (an image alone is the user's turn too): a
 * user message of only `tool_result` blocks is the tools answering.
 */
function lastUserIndex(messages: unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = obj(messages[i]);
    if (m?.role !== 'user') continue;
    const blocks = arr(m.content);
    if (!Array.isArray(m.content) || blocks.length === 0 || !blocks.every(isToolResult)) return i;
  }
  return -1;
}

/** `tool_use` blocks of assistant messages from `from` on, with the `tool_result` blocks answering them. */
function toolUses(messages: unknown[], from: number): Array<{ at: string; properties: Obj }> {
  const results = new Map<string, Obj>();
  for (const m of messages.slice(from))
    for (const b of arr(obj(m)?.content)) {
      const block = obj(b);
      const id = str(block?.tool_use_id);
      if (block?.type === 'tool_result' && id !== undefined) results.set(id, block);
    }
  const out: Array<{ at: string; properties: Obj }> = [];
  for (let i = from; i < messages.length; i++) {
    const m = obj(messages[i]);
    if (m?.role !== 'assistant') continue;
    arr(m.content).forEach((b, j) => {
      const block = obj(b);
      const name = str(block?.name);
      if (block?.type !== 'tool_use' || name === undefined) return;
      const id = str(block.id);
      const result = id === undefined ? undefined : results.get(id);
      out.push({
        at: `request.messages[${i}].content[${j}]`,
        properties: {
          name,
          args: jsonText(block.input),
          result: result === undefined ? undefined : (textOf(result.content) ?? jsonText(result.content)),
          call_id: id,
          success: result?.is_error === true ? false : undefined,
        },
      });
    });
  }
  return out;
}
