import { STATUS_CODES } from 'node:http';
import { type ErrorCode, errorBodySchema, type Issue } from '../shared/errors.js';

/** Error messages end up on one terminal line; a proxy's HTML page or a stack dump must not. */
export const MAX_MESSAGE_CHARS = 300;
/** Issues beyond this are noise for a person and memory for a log. */
const MAX_ISSUES = 50;

export interface ParsedErrorBody {
  message: string;
  code?: ErrorCode;
  issues?: Issue[];
}

/** Collapses whitespace and cuts at `max` characters, so any body becomes one readable line. */
export function oneLine(text: string, max = MAX_MESSAGE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Turns any non-2xx body into a one-line message. Our service sends `{status, code, message, issues}`;
 * the hosted service and proxies in between send plain text, HTML, `{"detail": ...}` (FastAPI style)
 * or `{"message": ...}`, so each is tried in turn and the status text is the last resort.
 */
export function parseErrorBody(status: number, text: string): ParsedErrorBody {
  const fallback = `HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
  const trimmed = text.trim();
  if (trimmed === '') return { message: fallback };

  const json = tryJson(trimmed);
  if (json !== undefined) {
    const ours = errorBodySchema.safeParse(json);
    if (ours.success) {
      const { code, issues } = ours.data;
      const message = oneLine(ours.data.message) || fallback;
      return issues ? { message, code, issues: issues.slice(0, MAX_ISSUES) } : { message, code };
    }
    return foreignJson(json) ?? { message: oneLine(trimmed) };
  }
  if (/^<(!doctype|html|\?xml)/i.test(trimmed)) return { message: htmlMessage(trimmed) || fallback };
  return { message: oneLine(trimmed) };
}

function tryJson(text: string): unknown {
  if (!text.startsWith('{') && !text.startsWith('[') && !text.startsWith('"')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function foreignJson(json: unknown): ParsedErrorBody | undefined {
  if (typeof json === 'string') return { message: oneLine(json) };
  if (!isRecord(json)) return undefined;
  const { detail, message, error, title } = json;
  if (typeof detail === 'string') return { message: oneLine(detail) };
  // FastAPI validation errors: detail: [{loc: ['query', 'ranges'], msg: '...'}].
  if (Array.isArray(detail) && detail.length > 0) {
    const issues = detail.slice(0, MAX_ISSUES).map(detailIssue);
    const first = issues[0];
    if (first)
      return { message: oneLine(first.path ? `${first.path}: ${first.message}` : first.message), issues };
  }
  if (typeof message === 'string' && message.trim()) return { message: oneLine(message) };
  if (typeof error === 'string' && error.trim()) return { message: oneLine(error) };
  if (isRecord(error) && typeof error.message === 'string') return { message: oneLine(error.message) };
  if (typeof title === 'string' && title.trim()) return { message: oneLine(title) };
  return undefined;
}

function detailIssue(item: unknown): Issue {
  if (!isRecord(item)) return { path: '', message: oneLine(String(JSON.stringify(item))) };
  const loc = Array.isArray(item.loc) ? item.loc.map(String).join('.') : '';
  const msg = typeof item.msg === 'string' ? item.msg : JSON.stringify(item);
  return { path: loc, message: oneLine(msg) };
}

/** A proxy's error page: its title says what happened; the markup does not. */
function htmlMessage(html: string): string {
  const title =
    /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1];
  const text = title ?? html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>|<[^>]+>/gi, ' ');
  return oneLine(text);
}

/**
 * `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Anything unparseable is ignored rather than trusted, so a bad header falls back to backoff.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1000);
  // Date.parse is lenient ('-5' is year -5); an HTTP date always names its month.
  const at = /[a-z]/i.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
