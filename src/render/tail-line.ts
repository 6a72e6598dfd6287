import { isMlError, type LiveFrame, mlErrorMessage } from '../shared/live-events.js';
import { jsonLine } from './output.js';
import { escapeControls } from './terminal-text.js';

/** Properties shown on a line, and how much of each value. */
const MAX_PROPERTIES = 4;
const MAX_VALUE = 60;

/** Properties that say most about an event, shown first when present. */
const FIRST = ['user', 'assistant', 'model', 'name', 'cost', 'turns', 'intent', 'sentiment'];

function shortValue(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? '');
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/**
 * An id or a key bare when it holds no space, `=`, quote or backslash, else as JSON: `user=eve
 * session=admin` was one user id that read as two fields (found by probing). An event's name may hold
 * single spaces (`Conversation Turn`).
 */
const BARE_ID = /^[^\s="\\]+$/;
const BARE_NAME = /^[^\s="\\]+(?: [^\s="\\]+)*$/;
const field = (text: string): string => (BARE_ID.test(text) ? text : JSON.stringify(text));

function keyProperties(properties: Record<string, unknown> | undefined): string {
  if (!properties) return '';
  const keys = Object.keys(properties);
  const ordered = [...FIRST.filter((k) => k in properties), ...keys.filter((k) => !FIRST.includes(k))];
  const shown = ordered.slice(0, MAX_PROPERTIES).map((k) => `${field(k)}=${shortValue(properties[k])}`);
  if (keys.length > MAX_PROPERTIES) shown.push(`+${keys.length - MAX_PROPERTIES}`);
  return shown.join(' ');
}

/**
 * One event as one terminal line: time, name, user, session, conversation, key properties. Every
 * part is stored text, so control characters show as escapes and a value cannot break the line.
 */
export function tailLine(frame: LiveFrame, options: { color: boolean }): string {
  const error = isMlError(frame);
  const event = escapeControls(BARE_NAME.test(frame.event) ? frame.event : JSON.stringify(frame.event), {
    oneLine: true,
  });
  const name = options.color ? `${error ? '\x1b[31m' : '\x1b[1m'}${event}\x1b[0m` : event;
  const parts = [frame.timestamp, name];
  if (frame.user_id !== '') parts.push(`user=${field(frame.user_id)}`);
  if (frame.session_id !== '') parts.push(`session=${field(frame.session_id)}`);
  if (frame.conversation_id !== undefined) parts.push(`conversation=${field(frame.conversation_id)}`);
  const details = error ? JSON.stringify(mlErrorMessage(frame)) : keyProperties(frame.properties);
  if (details !== '') parts.push(details);
  return parts.map((p, i) => (i === 1 ? p : escapeControls(p, { oneLine: true }))).join('  ');
}

/** JSONL: the frame exactly as the service sent it, one per line. */
export function tailJsonLine(frame: LiveFrame): string {
  return jsonLine(frame);
}
