/**
 * Stored text is anyone's text: an event property or trait may hold `ESC ] 0 ; … BEL` (retitle the
 * window), `ESC ] 52` (write the clipboard), `ESC [ 2 J` (clear the screen) or a bare CR that hides
 * what came before. Everything a person reads goes through here first, so such characters show as
 * visible escapes (`\x1b`, `\x9b`, `\u202e`) instead of acting. Our own colour codes are added after.
 */

/**
 * C0 controls except LF (tables and multi-line messages need it), DEL, C1 controls, and the
 * invisible reorderers and separators that make text read differently from what it is: bidi
 * embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), LRM/RLM/ALM, and the
 * line/paragraph separators U+2028/U+2029. Also the characters that draw nothing and join nothing
 * (zero-width space U+200B, word joiner U+2060, U+FEFF, Mongolian vowel separator U+180E): `alice`
 * with four of them looked like `alice`, and cli-table3 counted each as a column, so the row's border
 * fell short. ZWJ/ZWNJ (U+200C/D) stay: emoji sequences and several scripts are written with them.
 */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g;

/** The same set plus LF, and only the characters JSON.stringify leaves raw, for JSON output. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character shown as an escape; LF kept unless `oneLine`. */
export function escapeControls(text: string, options: { oneLine?: boolean } = {}): string {
  const escaped = text.replace(UNSAFE, visible);
  return options.oneLine ? escaped.replace(/\n/g, '\\n') : escaped;
}

/** Every string in a JSON-like value escaped (keys too); other values as they are. */
export function escapeDeep<T>(value: T, options: { oneLine?: boolean } = {}): T {
  if (typeof value === 'string') return escapeControls(value, options) as T;
  if (Array.isArray(value)) return value.map((v) => escapeDeep(v, options)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[escapeControls(k, options)] = escapeDeep(v, options);
    return out as T;
  }
  return value;
}

/**
 * JSON text made safe to print without changing what it parses to: JSON.stringify already escapes
 * C0 controls but leaves DEL, C1 and the bidi controls raw; `\u` escapes for them are the same JSON.
 */
export function terminalSafeJson(jsonText: string): string {
  return jsonText.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Leading characters a spreadsheet reads as the start of a formula (or DDE command). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain number is data even when it starts with `-` or `+`. */
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A CSV cell that a spreadsheet will not evaluate: `=HYPERLINK(…)`, `+cmd|…`, `@SUM(…)` get a
 * leading `'` (OWASP's "CSV injection" advice); numbers such as `-3.5` are left alone.
 */
export function guardFormula(cell: string): string {
  return FORMULA_START.test(cell) && !NUMBER.test(cell) ? `'${cell}` : cell;
}
