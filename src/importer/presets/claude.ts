import { arr, isoMs, jsonText, type Obj, obj, str, textOf } from './fields.js';
import type { Preset } from './preset.js';
import { fillTimes, type PresetItem, type PresetRecord } from './record.js';

/**
 * Claude.ai's data export, `conversations.json`: an array of conversations (`uuid`, `name`,
 * `account.uuid`, `chat_messages[]` in order, each `sender` human or assistant with `text`,
 * `content[]` blocks and `created_at`). One conversation → one session and one conversation named by
 * its uuid, the account's uuid as the user; a human message and the assistant's replies up to the
 * next human message → a turn timed at the reply (a message without `created_at` at the one before
 * it, else at the conversation's); `tool_use` blocks with their `tool_result` →
 * function calls. The export has no token counts, so turns carry no cost.
 */
export const claude: Preset = {
  name: 'claude',
  label: 'Claude export',
  container: 'document',
  twoPass: false,
  create: ({ tz }) => ({ map: (value) => mapConversation(value, tz) }),
};

interface Call {
  name: string;
  id: string | undefined;
  args: string | undefined;
  result?: string | undefined;
  error?: boolean;
  ms: number | undefined;
  end?: number | undefined;
  at: string;
  raw: Obj;
}

function mapConversation(value: unknown, tz: string): PresetItem[] {
  const c = obj(value);
  const id = str(c?.uuid);
  if (!c || id === undefined || !Array.isArray(c.chat_messages))
    return [{ ok: false, at: '', reason: 'not a Claude conversation: needs "uuid" and "chat_messages"' }];
  const base = { session: id, conversation: id, user: str(obj(c.account)?.uuid) };
  const out: PresetItem[] = [];
  let user: { text: string; ms: number | undefined; at: string; raw: Obj } | undefined;
  let replies: string[] = [];
  let reply: { ms: number | undefined; id: string | undefined; at: string; raw: Obj } | undefined;
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
      const record: PresetRecord = {
        kind: 'turn',
        at: reply?.at ?? user?.at ?? '',
        ms: reply?.ms ?? user?.ms,
        ...base,
        properties: {
          user: user?.text ?? '',
          assistant: replies.join('\n\n'),
          assistant_id: reply?.id,
          model: str(c.model),
        },
        raw: reply?.raw ?? user?.raw ?? {},
      };
      out.push({ ok: true, record });
    }
    user = undefined;
    reply = undefined;
    replies = [];
  };
  // A message without created_at takes the time of the message before it (else the conversation's):
  // never the import's, and never earlier than what it follows.
  let last = isoMs(c.created_at, tz);
  c.chat_messages.forEach((value, i) => {
    const m = obj(value);
    if (!m) return;
    const at = `chat_messages[${i}]`;
    const ms = isoMs(m.created_at, tz) ?? last;
    last = ms;
    const blocks = arr(m.content);
    const text = textOf(blocks.filter((b) => obj(b)?.type === 'text')) ?? str(m.text) ?? '';
    if (m.sender === 'human') {
      flush();
      user = { text, ms, at, raw: m };
      return;
    }
    if (m.sender !== 'assistant') return;
    blocks.forEach((value, j) => {
      const b = obj(value);
      if (b?.type === 'tool_use') {
        const name = str(b.name) ?? 'tool';
        const start = isoMs(b.start_timestamp, tz) ?? ms;
        calls.push({
          name,
          id: str(b.id),
          args: jsonText(b.input),
          ms: start,
          at: `${at}.content[${j}]`,
          raw: b,
        });
      } else if (b?.type === 'tool_result') {
        const callId = str(b.tool_use_id);
        const open =
          calls.find(
            (k) => k.result === undefined && (callId === undefined ? k.name === b.name : k.id === callId),
          ) ?? calls.find((k) => k.result === undefined);
        if (!open) return;
        open.result = textOf(b.content) ?? jsonText(b.content) ?? '';
        open.end = isoMs(b.stop_timestamp, tz) ?? isoMs(b.start_timestamp, tz);
        if (b.is_error === true) open.error = true;
      }
    });
    if (text === '') return;
    replies.push(text);
    reply = { ms, id: str(m.uuid), at, raw: m };
  });
  flush(true);
  return fillTimes(out);
}

function functionRecord(
  call: Call,
  base: { session: string; conversation: string; user: string | undefined },
) {
  const runtime =
    call.ms !== undefined && call.end !== undefined && call.end >= call.ms ? call.end - call.ms : undefined;
  const record: PresetRecord = {
    kind: 'function',
    at: call.at,
    ms: call.ms,
    ...base,
    properties: {
      name: call.name,
      args: call.args,
      result: call.result,
      runtime,
      call_id: call.id,
      success: call.error === true ? false : undefined,
    },
    raw: call.raw,
  };
  return record;
}
