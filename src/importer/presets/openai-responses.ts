import { sourceEventId } from '../event-id.js';
import { arr, jsonText, type Obj, obj, openaiUsage, secondsMs, str, textOf } from './fields.js';
import { usageProperties } from './openai-chat.js';
import type { Preset, PresetMapper, PresetOptions } from './preset.js';
import type { PresetItem, PresetRecord } from './record.js';
import { type HistoryItem, type TurnUser, turnUser } from './turn-user.js';

/**
 * JSON Lines logs of Responses API calls, `{request, response}` or a bare `response` object. Calls
 * chained by `previous_response_id` are one conversation and one session, named by the chain's first
 * response (or by the response's `conversation.id`); a first pass over the files reads the chains,
 * so lines may come in any order (stdin: parents before children). A call in no chain is placed
 * like openai-chat's: its user's sessions by the gap (`metadata.session_id` if given). A response with output text → a
 * turn: the request's last user input, with that of the turn's earlier calls that asked for tools
 * (`turnUser`, up the chain) and the text, at `created_at`, with usage (`input_tokens_details.cached_tokens`,
 * `output_tokens_details.reasoning_tokens`); `function_call` output items → function calls, their
 * result from the `function_call_output` a later request sends back; a response with only tool
 * calls → a usage record.
 *
 * Each record's event id comes from the response id (its turn, its usage, its n-th function call),
 * not from its content: a run that does not read the chain's first response names the session after
 * the first one it knows, and one that lacks a later call lacks a tool's result, so the same call
 * can be mapped differently by different runs, and must still be stored once.
 */
export const openaiResponses: Preset = {
  name: 'openai-responses',
  label: 'OpenAI Responses log',
  container: 'lines',
  twoPass: true,
  create,
};

const SOURCE = 'openai-responses';

function parts(value: unknown): { request: Obj; response: Obj | undefined } {
  const line = obj(value);
  if (line?.object === 'response') return { request: {}, response: line };
  return { request: obj(line?.request) ?? {}, response: obj(line?.response) };
}

/** A request's `input` as history (a string is one user message). */
function inputHistory(input: unknown): HistoryItem[] {
  if (typeof input === 'string') return [{ kind: 'user', text: input }];
  return arr(input).map((item): HistoryItem => {
    const m = obj(item);
    if (m?.type === 'function_call') return { kind: 'tools' };
    if (m?.type !== undefined && m.type !== 'message') return { kind: 'other' };
    if (m?.role === 'user') return { kind: 'user', text: textOf(m.content) };
    return { kind: m?.role === 'assistant' ? 'reply' : 'other' };
  });
}

const outputText = (output: unknown[]): string | undefined =>
  textOf(output.flatMap((o) => (obj(o)?.type === 'message' ? arr(obj(o)?.content) : [])));

/** A response that calls tools waits for their results: its text, if any, is a preamble, not the reply. */
const reply = (output: unknown[]): string | undefined =>
  output.some((o) => obj(o)?.type === 'function_call') ? undefined : outputText(output);

function create({ observedFirst }: PresetOptions): PresetMapper {
  const parent = new Map<string, string | undefined>();
  /** Responses a later one names as its previous_response_id. */
  const continued = new Set<string>();
  const conversationOf = new Map<string, string>();
  const results = new Map<string, string | undefined>();
  /**
   * User input of calls that answered with tool calls only: the turn that follows them names it. A
   * call that replied has none, so a turn's walk up the chain never passes the turn before it.
   */
  const pendingUser = new Map<string, TurnUser>();
  const observe = (value: unknown): void => {
    const { request, response } = parts(value);
    const id = str(response?.id);
    if (!response || id === undefined) return;
    const previous = str(response.previous_response_id) ?? str(request.previous_response_id);
    parent.set(id, previous);
    if (previous !== undefined) continued.add(previous);
    const conversation = str(obj(response.conversation)?.id) ?? str(response.conversation);
    if (conversation !== undefined) conversationOf.set(id, conversation);
    for (const item of arr(request.input)) {
      const o = obj(item);
      const callId = str(o?.call_id);
      if (o?.type === 'function_call_output' && callId !== undefined) results.set(callId, jsonText(o.output));
    }
    if (reply(arr(response.output)) === undefined) pendingUser.set(id, turnUser(inputHistory(request.input)));
  };
  const root = (id: string): string => {
    const seen = new Set<string>();
    let at = id;
    for (let p = parent.get(at); p !== undefined && parent.has(p) && !seen.has(p); p = parent.get(at)) {
      seen.add(p);
      at = p;
    }
    // A parent that is not in the logs is the chain's first known response: name it after that one.
    return conversationOf.get(id) ?? parent.get(at) ?? at;
  };
  /** The user's words of the turn's earlier, tool-only calls up the chain (turn-user.ts). */
  const userBefore = (id: string): string[] => {
    const texts: string[] = [];
    const seen = new Set<string>();
    for (let p = parent.get(id); p !== undefined && !seen.has(p); p = parent.get(p)) {
      seen.add(p);
      const user = pendingUser.get(p);
      if (user === undefined) break;
      if (user.text !== '') texts.unshift(user.text);
      if (!user.open) break;
    }
    return texts;
  };
  const userText = (input: unknown, id: string): string => {
    const own = turnUser(inputHistory(input));
    if (!own.open) return own.text;
    return [...userBefore(id), ...(own.text === '' ? [] : [own.text])].join('\n\n');
  };
  return {
    observe,
    map(value) {
      const { request, response } = parts(value);
      if (!response) return [{ ok: false, at: '', reason: 'no response in this line' }];
      const id = str(response.id);
      if (id === undefined) return [{ ok: false, at: 'response', reason: 'the response has no id' }];
      if (!parent.has(id)) observe(value);
      // Key by key: a logged response with empty metadata ({}) hid the request's (found by probing).
      const metadata = { ...obj(request.metadata), ...obj(response.metadata) };
      // A call in no chain and no conversation (stateless use, `store: false`, history sent again in
      // `input`) is grouped into its user's sessions by --session-gap, as openai-chat's calls are;
      // a session of its own each made every call a one-turn session. Known only once every line was
      // observed (not for stdin, whose later lines are not read yet: there it stays its own chain).
      const alone =
        observedFirst && parent.get(id) === undefined && !continued.has(id) && !conversationOf.has(id);
      const session = alone ? str(metadata.session_id) : root(id);
      const ids = {
        user:
          str(response.user) ?? str(request.user) ?? str(response.safety_identifier) ?? str(metadata.user_id),
        session,
        conversation: alone ? str(metadata.conversation_id) : session,
      };
      const ms = secondsMs(response.created_at);
      const model = str(response.model) ?? str(request.model);
      const usage = usageProperties(openaiUsage(response.usage), false);
      const output = arr(response.output);
      const out: PresetItem[] = [];
      output.forEach((item, i) => {
        const o = obj(item);
        const name = str(o?.name);
        if (o?.type !== 'function_call' || name === undefined) return;
        const callId = str(o.call_id);
        const properties = {
          name,
          args: jsonText(o.arguments),
          result: callId === undefined ? undefined : results.get(callId),
          call_id: callId,
        };
        out.push({
          ok: true,
          record: {
            kind: 'function',
            at: `response.output[${i}]`,
            ms,
            ...ids,
            eventId: sourceEventId(SOURCE, id, 'function', String(i)),
            properties,
            raw: o,
          },
        });
      });
      const text = reply(output);
      const raw = obj(value) ?? {};
      if (text === undefined) {
        if (usage.prompt_tokens !== undefined && model !== undefined)
          out.push({
            ok: true,
            record: {
              kind: 'usage',
              at: 'response',
              ms,
              ...ids,
              eventId: sourceEventId(SOURCE, id, 'usage'),
              properties: { model, ...usage },
              raw,
            },
          });
        return out;
      }
      const turn: PresetRecord = {
        kind: 'turn',
        at: 'response',
        ms,
        ...ids,
        eventId: sourceEventId(SOURCE, id, 'turn'),
        properties: {
          user: userText(request.input, id),
          assistant: text,
          assistant_id: id,
          model,
          ...usage,
        },
        raw,
      };
      out.push({ ok: true, record: turn });
      return out;
    },
  };
}
