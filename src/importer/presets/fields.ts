import { isPlainObject } from '../../shared/event-properties.js';
import { fromEpoch, parseTimestamp } from '../timestamps.js';

/** Small readers over untrusted JSON: each returns undefined for a value of another shape. */
export type Obj = Record<string, unknown>;

export const obj = (v: unknown): Obj | undefined => (isPlainObject(v) ? v : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A token count: a non-negative whole number, or its decimal text (OTLP writes int64 as a string). */
export function count(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Epoch seconds (ChatGPT's `create_time`, OpenAI's `created`: floats or integers) → ms. A log that
 * wrote milliseconds instead is read as milliseconds, as the flat importer reads epochs (`fromEpoch`):
 * as seconds they named a year past 50,000.
 */
export function secondsMs(v: unknown): number | undefined {
  if (typeof v !== 'number' || !(v > 0)) return undefined;
  const time = fromEpoch(v);
  return time.ok ? time.ms : undefined;
}

/**
 * An ISO 8601 time → ms; one written without a zone is read in `tz` (`--tz`), as the flat importer
 * reads it (`Date.parse` read it in the machine's zone).
 */
export function isoMs(v: unknown, tz: string): number | undefined {
  if (typeof v !== 'string') return undefined;
  const time = parseTimestamp(v, tz);
  return time?.ok ? time.ms : undefined;
}

/**
 * The text of a message's content in any of the shapes the APIs use: a string; an array of strings
 * or parts with `text` (OpenAI `text` / `input_text` / `output_text`, Anthropic `text` blocks) or
 * `content` (OpenTelemetry GenAI `parts`). Other parts (images, tool blocks) are left out.
 */
export function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    const p = obj(part);
    if (!p) continue;
    const type = p.type;
    if (type !== undefined && !['text', 'input_text', 'output_text'].includes(String(type))) continue;
    const t = typeof p.text === 'string' ? p.text : p.content;
    if (typeof t === 'string') texts.push(t);
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Function arguments and results are JSON text on the wire: strings kept, anything else encoded. */
export function jsonText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Usage in the wire's convention: `prompt_tokens` is the whole input, cached and cache-written
 * tokens included (`cached_prompt_tokens`, `cache_creation_tokens` are subsets of it), and
 * `reasoning_tokens` a subset of `completion_tokens` (OpenAI's convention).
 */
export interface Usage {
  prompt_tokens?: number | undefined;
  completion_tokens?: number | undefined;
  cached_prompt_tokens?: number | undefined;
  cache_creation_tokens?: number | undefined;
  cache_creation_1h_tokens?: number | undefined;
  reasoning_tokens?: number | undefined;
}

/** Chat Completions (`prompt_tokens`...) and Responses (`input_tokens`...) usage objects. */
export function openaiUsage(u: unknown): Usage {
  const o = obj(u);
  if (!o) return {};
  const inDetails = obj(o.prompt_tokens_details) ?? obj(o.input_tokens_details);
  const outDetails = obj(o.completion_tokens_details) ?? obj(o.output_tokens_details);
  return {
    prompt_tokens: count(o.prompt_tokens) ?? count(o.input_tokens),
    completion_tokens: count(o.completion_tokens) ?? count(o.output_tokens),
    cached_prompt_tokens: positive(count(inDetails?.cached_tokens)),
    reasoning_tokens: positive(count(outDetails?.reasoning_tokens)),
  };
}

/**
 * Anthropic's `input_tokens` excludes the tokens written to and read from the cache; the wire's
 * `prompt_tokens` is their sum.
 */
export function anthropicUsage(u: unknown): Usage {
  const o = obj(u);
  if (!o) return {};
  const input = count(o.input_tokens);
  const created = count(o.cache_creation_input_tokens) ?? 0;
  const read = count(o.cache_read_input_tokens) ?? 0;
  // The split by time to live: an hour's writes cost 2x the input rate, five minutes' 1.25x.
  const hour = count(obj(o.cache_creation)?.ephemeral_1h_input_tokens);
  return {
    prompt_tokens: input === undefined ? undefined : input + created + read,
    completion_tokens: count(o.output_tokens),
    cached_prompt_tokens: positive(read),
    cache_creation_tokens: positive(created),
    cache_creation_1h_tokens: positive(hour === undefined ? undefined : Math.min(hour, created)),
  };
}

/** Zero detail counts are left out: the same call logged with or without them stores alike. */
const positive = (n: number | undefined): number | undefined => (n === undefined || n === 0 ? undefined : n);
