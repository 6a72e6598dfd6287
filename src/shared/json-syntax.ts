/**
 * Why `text` is not JSON, with the line and column where `JSON.parse` stopped: its own message gives
 * a character position ("at position 50"), which nobody can find in a file by eye. Where V8 gives no
 * position (an unexpected token: it quotes the text around it instead), the reason alone.
 */
export function jsonSyntaxError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = /\s*(?:in JSON )?at position (\d+)(?: \(line \d+ column \d+\))?/.exec(message);
  const reason = (at ? message.slice(0, at.index) : message).replace(/ in JSON$/, '');
  const position = at ? Number(at[1]) : /end of JSON input/.test(message) ? text.length : undefined;
  if (position === undefined) return reason;
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `line ${line}, column ${column}: ${reason}`;
}

/** `JSON.parse`, throwing `make(why)` with the line and column of a syntax error. */
export function parseJsonText(text: string, make: (why: string) => Error): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw make(jsonSyntaxError(text, error));
  }
}
