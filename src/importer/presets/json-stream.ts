import { isUtf8 } from 'node:buffer';
import { MAX_LINE_BYTES } from '../jsonl-reader.js';
import { loneSurrogateProblem } from '../lone-surrogates.js';

/** One value of a JSON stream: where it starts, its index (array element or n-th document), its value. */
export type JsonStreamItem =
  | { ok: true; line: number; index: number; value: unknown }
  | { ok: false; line: number; index: number; reason: string; text: string };

const [LF, CR, SP, TAB, COMMA, QUOTE, BSLASH] = [10, 13, 32, 9, 44, 34, 92];
const [LBRACE, RBRACE, LBRACKET, RBRACKET] = [123, 125, 91, 93];
const BOM = [0xef, 0xbb, 0xbf];
const isSpace = (c: number) => c === SP || c === LF || c === CR || c === TAB;

/**
 * Streams the values of a JSON file one at a time, so a ChatGPT `conversations.json` of a few
 * hundred MB is never held whole: a top-level array yields its elements; anything else (JSON Lines,
 * pretty-printed documents one after another) yields each top-level value. Values are delimited by a
 * byte scan (strings and escapes tracked), then parsed one by one, so a bad element costs only
 * itself as long as its brackets balance. A UTF-8 BOM is skipped.
 *
 * Values one after another are mostly JSON Lines (the OTel Collector's file exporter), whose lines a
 * crash can cut short, so there the scan also ends a value where a line shows it broken, and goes on
 * with the next line: a string running into a raw line break (JSON strings cannot hold one); a `{`
 * at the start of a line while a value begun at the start of a line is still open (machine-written
 * JSON, pretty-printed or not, indents what it nests); and a value that is no object or array runs
 * to the end of its line (`this is not json` is one bad value, not four).
 */
export async function* readJsonStream(
  chunks: AsyncIterable<Buffer>,
  maxValueBytes = MAX_LINE_BYTES,
): AsyncGenerator<JsonStreamItem[]> {
  let mode: 'start' | 'array' | 'sequence' | 'done' = 'start';
  let base = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let inValue = false;
  let scalar = false;
  let line = 1;
  let startLine = 1;
  let index = 0;
  let pieces: Buffer[] = [];
  let size = 0;
  /** Bytes of a UTF-8 BOM matched so far at the start (which may span chunks). */
  let bom = 0;
  let trailing = false;
  let out: JsonStreamItem[] = [];
  /** Whether the byte being scanned is the first of its line, and whether the open value's was. */
  let atLineStart = true;
  let valueAtLineStart = false;
  /** A sequence's value that is no object or array: it runs to the end of its line. */
  let lineValue = false;

  const finish = (): void => {
    const bytes = Buffer.concat(pieces);
    pieces = [];
    inValue = false;
    const i = index++;
    if (size > maxValueBytes) {
      const text = bytes.subarray(0, 200).toString('utf8');
      out.push({
        ok: false,
        line: startLine,
        index: i,
        reason: `value longer than ${maxValueBytes} bytes`,
        text,
      });
    } else out.push(parse(bytes, startLine, i));
    size = 0;
  };
  /** Ends the open value as refused, for a reason the scan saw; the next one starts afresh. */
  const broken = (reason: string): void => {
    const text = Buffer.concat(pieces).subarray(0, 200).toString('utf8');
    pieces = [];
    size = 0;
    out.push({ ok: false, line: startLine, index: index++, reason, text });
    inValue = false;
    inString = false;
    escaped = false;
    depth = base;
  };
  const keep = (piece: Buffer): void => {
    const was = size;
    size += piece.length;
    if (size <= maxValueBytes) pieces.push(piece);
    // Past the limit only the value's beginning is kept, for the message.
    else if (was <= maxValueBytes) pieces = [Buffer.concat([...pieces, piece]).subarray(0, 200)];
  };

  for await (const chunk of chunks) {
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      const lineStart = atLineStart;
      atLineStart = c === LF;
      if (c === LF) line++;
      if (lineValue) {
        if (c === LF || c === CR) {
          keep(chunk.subarray(from, i));
          finish();
          lineValue = false;
        }
        continue;
      }
      if (inString && c === LF && mode === 'sequence') {
        keep(chunk.subarray(from, i));
        broken('a string runs into the end of its line: the line is cut short or not JSON');
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (inValue && scalar && depth === base) {
            keep(chunk.subarray(from, i + 1));
            finish();
          }
        }
        continue;
      }
      if (inValue && scalar && (isSpace(c) || c === COMMA || c === RBRACKET || c === RBRACE)) {
        keep(chunk.subarray(from, i));
        finish();
      }
      if (!inValue) {
        if (isSpace(c)) continue;
        if (mode === 'start') {
          if (bom < 3 && c === BOM[bom]) {
            bom++;
            continue;
          }
          if (c === LBRACKET) {
            mode = 'array';
            base = 1;
            depth = 1;
            continue;
          }
          mode = 'sequence';
        }
        if (mode === 'array' && c === COMMA) continue;
        if (mode === 'array' && c === RBRACKET) {
          mode = 'done';
          depth = 0;
          continue;
        }
        if (mode === 'done') {
          if (!trailing) {
            trailing = true;
            const text = chunk.subarray(i, i + 200).toString('utf8');
            out.push({
              ok: false,
              line,
              index: index++,
              reason: 'text after the end of the JSON array',
              text,
            });
          }
          continue;
        }
        inValue = true;
        startLine = line;
        from = i;
        valueAtLineStart = lineStart;
        scalar = c !== LBRACE && c !== LBRACKET;
        if (scalar && mode === 'sequence') lineValue = true;
        else if (c === QUOTE) inString = true;
        else if (!scalar) depth++;
        continue;
      }
      if (c === LBRACE && lineStart && valueAtLineStart && mode === 'sequence') {
        keep(chunk.subarray(from, i));
        broken(`this value breaks off: line ${line} starts another`);
        inValue = true;
        startLine = line;
        from = i;
        scalar = false;
        depth = base + 1;
        valueAtLineStart = true;
        continue;
      }
      if (c === QUOTE) inString = true;
      else if (c === LBRACE || c === LBRACKET) depth++;
      else if (c === RBRACE || c === RBRACKET) {
        depth--;
        if (depth === base) {
          keep(chunk.subarray(from, i + 1));
          finish();
        }
      }
    }
    if (inValue) {
      keep(chunk.subarray(from));
      from = 0;
    }
    if (out.length > 0) {
      yield out;
      out = [];
    }
  }
  if (inValue) {
    if (scalar && !inString) finish();
    else if (mode === 'sequence' && inString) broken('the file ends inside a string: the line is cut short');
    else {
      const text = Buffer.concat(pieces).subarray(0, 200).toString('utf8');
      out.push({
        ok: false,
        line: startLine,
        index: index++,
        reason: 'the file ends inside this value',
        text,
      });
    }
  } else if (mode === 'array') {
    out.push({
      ok: false,
      line,
      index: index++,
      reason: 'the file ends before the JSON array is closed',
      text: '',
    });
  }
  if (out.length > 0) yield out;
}

function parse(bytes: Buffer, line: number, index: number): JsonStreamItem {
  const text = bytes.toString('utf8');
  if (!isUtf8(bytes))
    return { ok: false, line, index, reason: 'invalid UTF-8 in this value', text: text.slice(0, 200) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, line, index, reason: `not valid JSON: ${detail}`, text: text.slice(0, 200) };
  }
  const lone = loneSurrogateProblem(text, value);
  if (lone !== undefined) return { ok: false, line, index, reason: lone, text: text.slice(0, 200) };
  return { ok: true, line, index, value };
}
