import { abortable } from '../abortable.js';
import { type InputFile, inputBytes } from '../sources.js';
import { obj, str } from './fields.js';
import { readJsonStream } from './json-stream.js';
import type { PresetName } from './preset.js';

/**
 * The preset a file's first record unmistakably belongs to, or undefined: a record of the flat
 * mapping (a `kind` key, a wire event) or anything unclear is left to the flat mapping, so existing
 * imports read as before.
 */
export function detectPreset(value: unknown): PresetName | undefined {
  const o = obj(value);
  if (!o || 'kind' in o) return undefined;
  // Not current_node alone: an export whose first conversation lacks it was read by the flat mapping,
  // every line refused (found by probing); the preset refuses only that conversation.
  const named = str(o.current_node) ?? str(o.conversation_id) ?? str(o.id);
  if (obj(o.mapping) && named !== undefined) return 'chatgpt';
  if (Array.isArray(o.chat_messages) && str(o.uuid) !== undefined) return 'claude';
  if (Array.isArray(o.resourceSpans) || Array.isArray(o.resource_spans)) return 'otlp';
  if (str(o.custom_id) !== undefined) {
    if (obj(obj(o.response)?.body) || Array.isArray(obj(o.body)?.messages)) return 'openai-chat';
    if (obj(obj(o.result)?.message)) return 'anthropic';
    return undefined;
  }
  const response = obj(o.response) ?? o;
  if (response === o && !('object' in o) && o.type !== 'message') return undefined;
  if (response.object === 'chat.completion' || (response !== o && Array.isArray(response.choices)))
    return 'openai-chat';
  if (response.object === 'response' || (response !== o && Array.isArray(response.output)))
    return 'openai-responses';
  if (response.type === 'message' && response.role === 'assistant' && Array.isArray(response.content))
    return 'anthropic';
  return undefined;
}

/** A first record larger than this is not looked for: the file is left to the flat mapping. */
const SNIFF_BYTES = 16 * 1024 * 1024;

async function* head(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let n = 0;
  for await (const chunk of chunks) {
    yield chunk;
    n += chunk.length;
    if (n >= SNIFF_BYTES) return;
  }
}

/** Reads a file's first JSON value (an array's first element) and detects its preset. */
export function sniffPreset(path: string): Promise<PresetName | undefined> {
  return sniffFrom({ path, display: path, format: 'jsonl' }, undefined);
}

async function sniffFrom(
  file: InputFile,
  stdin: AsyncIterable<Buffer> | undefined,
): Promise<PresetName | undefined> {
  try {
    const bytes = head(inputBytes(file, { skip: 0, headOnly: true, stdin }));
    for await (const items of readJsonStream(bytes)) {
      const first = items[0];
      return first?.ok ? detectPreset(first.value) : undefined;
    }
  } catch {
    // Unreadable here is unreadable for the import too, which reports it with the file's name.
  }
  return undefined;
}

const asBuffer = (chunk: Buffer | string): Buffer => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk);

/**
 * Stdin is read once: its first bytes are looked at for a preset as a file's are, and handed on with
 * the rest. `cat conversations.json | cas import -` was read by the flat mapping, every record of an
 * export refused (stop 60's list).
 */
export async function sniffStdinPreset(
  stdin: AsyncIterable<Buffer | string>,
  signal?: AbortSignal,
): Promise<{ preset: PresetName | undefined; stdin: AsyncIterable<Buffer> }> {
  const it = stdin[Symbol.asyncIterator]();
  let seen: Buffer[] = [];
  let ended = false;
  // Left early by the sniff: only this generator ends, never the stream under it.
  async function* peek(): AsyncGenerator<Buffer> {
    for (;;) {
      const next = await it.next();
      if (next.done) {
        ended = true;
        return;
      }
      const chunk = asBuffer(next.value);
      seen.push(chunk);
      // A producer writing a byte at a time held one Buffer per byte: 1.7 GB for a 17 MB record (probe).
      if (seen.length >= 1024) seen = [Buffer.concat(seen)];
      yield chunk;
    }
  }
  // Ctrl-C on an idle stdin stops at once, as the import's own read does (probe: it waited for EOF).
  const preset = await sniffFrom(
    { path: '-', display: '<stdin>', format: 'jsonl' },
    abortable(peek(), signal),
  );
  async function* replay(): AsyncGenerator<Buffer> {
    yield* seen.splice(0);
    if (ended) return;
    for (let next = await it.next(); !next.done; next = await it.next()) yield asBuffer(next.value);
  }
  return { preset, stdin: replay() };
}
