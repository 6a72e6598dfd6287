import { arr, jsonText, type Obj, obj, secondsMs, str } from './fields.js';
import type { Preset } from './preset.js';
import { fillTimes, type PresetItem, type PresetRecord } from './record.js';

/**
 * ChatGPT's data export, `conversations.json`: an array of conversations, each a tree of message
 * nodes (`mapping`) whose active branch is walked back from `current_node` (edits and regenerations
 * leave the other branches behind). One conversation → one session and one conversation, named by
 * its id (one whose `current_node` is missing or names no node is refused: its branch is unknown).
 * Each user message and the assistant's text replies up to the next user message make a
 * turn, timed at the reply (a message without `create_time` at the one before it, else at the
 * conversation's; one whose `create_time` is no epoch time is refused); assistant messages addressed to a tool (`recipient` other than `all`)
 * and the tool's answer make a function call. The export has no user id (`--set user_id=`) and no
 * token counts, so turns carry the model but no cost.
 */
export const chatgpt: Preset = {
  name: 'chatgpt',
  label: 'ChatGPT export',
  container: 'document',
  twoPass: false,
  create: () => ({ map: mapConversation }),
};

/**
 * The active branch, root first. A parent that names no node, or a cycle, breaks it: the walk stops
 * there and says where, so the conversation is refused rather than cut short without a word (its
 * messages before the break were lost: found by probing).
 */
export function activeBranch(
  mapping: Obj,
  current: string | undefined,
): { nodes: Array<{ id: string; node: Obj }>; broken?: { at: string; reason: string } } {
  const out: Array<{ id: string; node: Obj }> = [];
  const seen = new Set<string>();
  let broken: { at: string; reason: string } | undefined;
  for (let id = current; id !== undefined; ) {
    const node = obj(mapping[id]);
    if (!node) break;
    seen.add(id);
    out.push({ id, node });
    const parent = str(node.parent);
    if (parent !== undefined && (seen.has(parent) || !obj(mapping[parent]))) {
      const what = seen.has(parent) ? 'makes a cycle' : 'is not a node of mapping';
      broken = {
        at: `mapping.${id}.parent`,
        reason: `${JSON.stringify(parent)} ${what}, so the active branch is broken`,
      };
      break;
    }
    id = parent;
  }
  return { nodes: out.reverse(), ...(broken ? { broken } : {}) };
}

/** A `create_time` given (not null) that is no positive epoch time: ChatGPT writes a number of seconds. */
const unreadableTime = (v: unknown): boolean => v !== undefined && v !== null && secondsMs(v) === undefined;

function badTime(at: string, v: unknown): PresetItem {
  return { ok: false, at, reason: `${JSON.stringify(v)} is not a time in epoch seconds` };
}

const hasMessage = (mapping: Obj): boolean => Object.values(mapping).some((n) => obj(obj(n)?.message));

/**
 * A message's text: string parts and the transcripts of voice parts (images, audio and other objects
 * left out), else `text` (code, output), else `result`. Voice mode writes its messages as
 * `multimodal_text` with `audio_transcription` parts only: without them its turns were empty.
 */
function textOf(content: Obj | undefined): string {
  if (!content) return '';
  const parts = arr(content.parts).flatMap((p) => {
    if (typeof p === 'string') return [p];
    const part = obj(p);
    const said = part?.content_type === 'audio_transcription' ? str(part.text) : undefined;
    return said === undefined ? [] : [said];
  });
  if (parts.length > 0) return parts.join('\n');
  return str(content.text) ?? str(content.result) ?? '';
}

const SKIPPED = new Set(['user_editable_context', 'model_editable_context', 'thoughts', 'reasoning_recap']);

interface Call {
  name: string;
  args: string | undefined;
  result?: string | undefined;
  ms: number | undefined;
  end?: number | undefined;
  id: string;
  at: string;
  raw: Obj;
}

function mapConversation(value: unknown): PresetItem[] {
  const c = obj(value);
  if (!c) return [{ ok: false, at: '', reason: 'expected a conversation object' }];
  const mapping = obj(c.mapping);
  const id = str(c.conversation_id) ?? str(c.id);
  if (!mapping || id === undefined)
    return [{ ok: false, at: '', reason: 'not a ChatGPT conversation: needs "mapping" and "id"' }];
  const current = str(c.current_node);
  if ((current === undefined || !obj(mapping[current])) && hasMessage(mapping)) {
    // Which branch is the conversation is not ours to guess: the user hears of it, as of any bad one.
    const what = current === undefined ? 'missing' : `${JSON.stringify(current)} is not a node of mapping`;
    return [{ ok: false, at: 'current_node', reason: `${what}, so the active branch is unknown` }];
  }
  const out: PresetItem[] = [];
  const base = { session: id, conversation: id };
  let user: { text: string; ms: number | undefined; raw: Obj; at: string } | undefined;
  let replies: string[] = [];
  let reply:
    | { ms: number | undefined; model: string | undefined; id: string; at: string; raw: Obj }
    | undefined;
  let calls: Call[] = [];
  /**
   * `atEnd`: the conversation's end. A question still without a reply there is not a turn yet: stored
   * with an empty reply, the later export that holds its reply stored it a second time, as another
   * turn (found by probing); that export stores it once.
   */
  const flush = (atEnd = false): void => {
    for (const call of calls) out.push({ ok: true, record: functionRecord(call, base) });
    calls = [];
    if (reply || (user && !atEnd)) {
      const at = reply?.at ?? user?.at ?? '';
      const record: PresetRecord = {
        kind: 'turn',
        at,
        ms: reply?.ms ?? user?.ms,
        ...base,
        properties: {
          user: user?.text ?? '',
          assistant: replies.join('\n\n'),
          assistant_id: reply?.id,
          model: reply?.model ?? str(c.default_model_slug),
        },
        raw: reply?.raw ?? user?.raw ?? {},
      };
      out.push({ ok: true, record });
    }
    user = undefined;
    reply = undefined;
    replies = [];
  };
  // A message without create_time takes the time of the message before it in the branch (else the
  // conversation's): never the import's, and never earlier than what it follows.
  if (unreadableTime(c.create_time)) return [badTime('create_time', c.create_time)];
  let last = secondsMs(c.create_time);
  const branch = activeBranch(mapping, current);
  if (branch.broken) return [{ ok: false, ...branch.broken }];
  for (const { id: nodeId, node } of branch.nodes) {
    const m = obj(node.message);
    if (!m) continue;
    const own = secondsMs(m.create_time);
    const ms = own ?? last;
    last = ms;
    const at = `mapping.${nodeId}.message`;
    const role = str(obj(m.author)?.role);
    const content = obj(m.content);
    const type = str(content?.content_type) ?? 'text';
    const metadata = obj(m.metadata);
    if (SKIPPED.has(type) || metadata?.is_visually_hidden_from_conversation === true) continue;
    // A message it stores whose time is given but unreadable is refused, not dated by the one before
    // (found by probing); a skipped one's only went unused, as before.
    if (unreadableTime(m.create_time)) return [badTime(`${at}.create_time`, m.create_time)];
    if (role === 'user') {
      flush();
      user = { text: textOf(content), ms, raw: m, at };
    } else if (role === 'assistant') {
      const recipient = str(m.recipient) ?? 'all';
      if (recipient !== 'all') {
        calls.push({
          name: recipient,
          args: jsonText(textOf(content)),
          ms,
          id: str(m.id) ?? nodeId,
          at,
          raw: m,
        });
        continue;
      }
      const text = textOf(content);
      if (text === '') continue;
      replies.push(text);
      reply = { ms, model: str(metadata?.model_slug), id: str(m.id) ?? nodeId, at, raw: m };
    } else if (role === 'tool') {
      const name = str(obj(m.author)?.name) ?? 'tool';
      const open =
        calls.find((k) => k.result === undefined && k.name === name) ??
        calls.find((k) => k.result === undefined);
      const result = textOf(content);
      const answered = calls.at(-1);
      if (open) {
        open.result = result;
        // Its own time only: an answer that inherited the call's time would give a runtime of 0.
        open.end = own;
      } else if (answered?.name === name && answered.result !== undefined) {
        // More of the same call's answer (browsing quotes one message per page): one call, not one
        // more without arguments for each message.
        answered.result = answered.result === '' ? result : `${answered.result}\n\n${result}`;
        if (own !== undefined) answered.end = own;
      } else {
        // A tool that answered without a call in the branch (a browsing display, an image).
        calls.push({ name, args: undefined, result, ms, id: str(m.id) ?? nodeId, at, raw: m });
      }
    }
  }
  flush(true);
  return fillTimes(out);
}

function functionRecord(call: Call, base: { session: string; conversation: string }): PresetRecord {
  const runtime =
    call.ms !== undefined && call.end !== undefined && call.end >= call.ms ? call.end - call.ms : undefined;
  return {
    kind: 'function',
    at: call.at,
    ms: call.ms,
    ...base,
    properties: { name: call.name, args: call.args, result: call.result, runtime, call_id: call.id },
    raw: call.raw,
  };
}
