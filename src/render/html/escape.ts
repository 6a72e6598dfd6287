import { createHash } from 'node:crypto';
import { terminalSafeJson } from '../terminal-text.js';

/**
 * What makes embedded data inert. Data reaches the page only as JSON inside
 * `<script type="application/json">`, which the browser never runs but whose text ends at the first
 * `</script`: so `<` (and `>`, `&`, for old parsers' comment and entity rules) are written as JSON
 * escapes, which JSON.parse reads back to the same string. The rest is the terminal's JSON
 * (`terminalSafeJson`): a page written to a terminal (`--format html` without `--out`) must not act on
 * it (U+009B is a CSI to xterm), and U+2028/U+2029 end a line in a JavaScript string literal, should
 * this text ever be inlined into one.
 */

const MARKUP = /[<>&]/g;

function unicodeEscape(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** JSON text safe to put between `<script type="application/json">` and `</script>`. */
export function jsonForScript(value: unknown): string {
  return terminalSafeJson(JSON.stringify(value) ?? 'null').replace(MARKUP, unicodeEscape);
}

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text for an HTML text node or a quoted attribute (only our own fixed strings and ids go there). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ENTITIES[ch] ?? ch);
}

/**
 * A CSP source for one inline script. The page allows only its own two scripts by hash, so even a
 * text that slipped past the escaping could not run as a script.
 */
export function scriptHash(source: string): string {
  return `'sha256-${createHash('sha256').update(source, 'utf8').digest('base64')}'`;
}

/** `</script` inside an inlined library would end its element early; none is expected, but say so. */
export function assertInlineable(source: string, name: string): string {
  if (/<\/script/i.test(source)) throw new Error(`${name} contains "</script" and cannot be inlined`);
  return source;
}
