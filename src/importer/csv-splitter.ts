/**
 * Splits CSV text into records before csv-parse sees it. csv-parse alone cannot recover from broken
 * quoting (after an error it misreads the rest of the file), and its `info: true` mode, the only way
 * to learn line numbers, parses 2.5x slower. So this pass finds record boundaries (RFC 4180 quoting,
 * multi-line fields), knows each record's first line, and turns a quoting error into one bad record,
 * resuming at the next line; csv-parse then splits only well-formed records into fields.
 */

export type Segment =
  /** Consecutive well-formed records (each ends with a newline) and the first line of each. */
  | { type: 'good'; text: string; lines: number[] }
  | { type: 'bad'; line: number; text: string; reason: string };

const BLANK_ROW = /^[ \t,\r\n]*$/;
const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/** A quoted field longer than this is taken for an unclosed quote (no event may exceed 1 MiB anyway). */
export const MAX_RECORD_CHARS = 2 * 1024 * 1024;

export class CsvSplitter {
  /** Unconsumed text; `buf[0]` always starts a record, on line `line`. */
  private buf = '';
  private line = 1;
  /** Index where the current record starts (everything before it is done). */
  private start = 0;
  /** Where scanning resumes; `quoteAt` >= 0 while inside the quoted field opened there. */
  private pos = 0;
  private quoteAt = -1;
  /** Next `"` at or after `quoteFrom` (-1: none in the buffer), so quote-free text is searched once. */
  private nextQuote = -1;
  private quoteFrom = Number.POSITIVE_INFINITY;
  private out: Segment[] = [];
  private goodText = '';
  private goodLines: number[] = [];
  /**
   * Inside a record past `maxRecordChars`: its text is dropped as it is read (memory stays bounded)
   * while its quoting is still followed, so it ends where its last quoted field closes and a newline
   * follows. Resuming at the next line inside its quoted field instead read the field's text as
   * records: a cell's lines stored as events of their own (found by probing).
   */
  private skip: { line: number; head: string; inQuote: boolean } | undefined;

  /**
   * The file ends its lines with CR alone (csv-reader.ts turns those into LFs outside quoted fields):
   * a CR left inside a quoted field is a line of the file too, for the line numbers records report.
   */
  crLines = false;

  constructor(private readonly maxRecordChars = MAX_RECORD_CHARS) {}

  /**
   * Adds decoded text; returns the records it completed. `suspectUtf8` says the input held bytes that
   * are not UTF-8 (decoded as U+FFFD): records containing U+FFFD are then rejected, not imported garbled.
   */
  push(text: string, suspectUtf8: boolean): Segment[] {
    this.buf += text;
    this.quoteFrom = Number.POSITIVE_INFINITY;
    this.scan(false, suspectUtf8);
    return this.take();
  }

  /** Ends the input: a last record without a newline is complete; an open quote is an error. */
  end(suspectUtf8: boolean): Segment[] {
    this.scan(true, suspectUtf8);
    return this.take();
  }

  private take(): Segment[] {
    this.flushGood();
    if (this.start > 0) {
      this.buf = this.buf.slice(this.start);
      this.pos -= this.start;
      if (this.quoteAt >= 0) this.quoteAt -= this.start;
      this.start = 0;
      this.quoteFrom = Number.POSITIVE_INFINITY;
    }
    const out = this.out;
    this.out = [];
    return out;
  }

  private quoteAfter(i: number): number {
    if (i < this.quoteFrom || (this.nextQuote !== -1 && this.nextQuote < i)) {
      this.nextQuote = this.buf.indexOf('"', i);
      this.quoteFrom = i;
    }
    return this.nextQuote;
  }

  private scan(atEnd: boolean, suspectUtf8: boolean): void {
    const s = this.buf;
    let i = this.pos;
    for (;;) {
      if (this.skip) {
        i = this.skipOn(i, atEnd);
        if (this.skip) return;
        continue;
      }
      if (this.quoteAt >= 0) {
        const q = this.quoteAfter(i);
        if (q === -1) {
          if (!atEnd && s.length - this.start <= this.maxRecordChars) {
            this.pos = s.length;
            return;
          }
          if (!atEnd) {
            this.skip = { line: this.line, head: s.slice(this.start, this.start + 200), inQuote: true };
            this.drop(s.length);
            return;
          }
          // The input ends inside the quote: a stray quote, most likely; the rest of its line is lost.
          i = this.reject(
            this.quoteAt,
            `the quote opened on line ${this.lineOf(this.quoteAt)} is never closed`,
          );
          continue;
        }
        if (q + 1 >= s.length && !atEnd) {
          this.pos = q;
          return;
        }
        const next = s.charCodeAt(q + 1);
        if (next === QUOTE) {
          i = q + 2;
        } else if (next === COMMA) {
          this.quoteAt = -1;
          i = q + 2;
        } else if (q + 1 >= s.length || next === LF) {
          i = this.endRecord(Math.min(q + 2, s.length), suspectUtf8);
        } else if (next === CR && s.charCodeAt(q + 2) === LF) {
          i = this.endRecord(q + 3, suspectUtf8);
        } else if (next === CR && q + 2 >= s.length && !atEnd) {
          this.pos = q;
          return;
        } else {
          const nl = s.indexOf('\n', q);
          if (nl === -1 && !atEnd) {
            this.pos = q;
            return;
          }
          i = this.reject(q, `text after the closing quote of a field on line ${this.lineOf(q)}`);
        }
        continue;
      }
      const nl = s.indexOf('\n', i);
      const q = this.quoteAfter(i);
      if (q !== -1 && (nl === -1 || q < nl)) {
        // A quote opens a field only at its start; elsewhere it is kept as text (csv-parse relax_quotes).
        if (q === this.start || s.charCodeAt(q - 1) === COMMA) this.quoteAt = q;
        i = q + 1;
      } else if (nl !== -1) {
        i = this.endRecord(nl + 1, suspectUtf8);
      } else if (atEnd && this.start < s.length) {
        i = this.endRecord(s.length, suspectUtf8);
      } else {
        this.pos = s.length;
        return;
      }
    }
  }

  /** Drops `buf[start, end)` of an oversized record, counting its lines. */
  private drop(end: number): void {
    this.line += countNewlines(this.buf, this.start, end, this.crLines);
    this.start = end;
    this.pos = end;
    this.quoteAt = -1;
  }

  /** Follows an oversized record's quoting to its end; returns where scanning resumes. */
  private skipOn(from: number, atEnd: boolean): number {
    const s = this.buf;
    const skip = this.skip!;
    let i = from;
    // Where the text not yet judged starts, kept for the next chunk (a quote that may be doubled, a
    // comma before a quote that may open a field).
    let keepFrom = s.length;
    for (;;) {
      const q = s.indexOf('"', i);
      if (skip.inQuote) {
        if (q === -1) break;
        if (q + 1 >= s.length && !atEnd) {
          keepFrom = q;
          break;
        }
        if (s.charCodeAt(q + 1) === QUOTE) i = q + 2;
        else {
          skip.inQuote = false;
          i = q + 1;
        }
        continue;
      }
      const nl = s.indexOf('\n', i);
      if (nl !== -1 && (q === -1 || nl < q)) {
        this.drop(nl + 1);
        this.skip = undefined;
        this.bad(
          skip.line,
          `${skip.head}…\n`,
          `a record of more than ${this.maxRecordChars.toLocaleString('en')} characters (lines ${skip.line}-${this.line - 1}): too large for an event`,
        );
        return nl + 1;
      }
      if (q === -1) {
        if (s.length > i && s.charCodeAt(s.length - 1) === COMMA) keepFrom = s.length - 1;
        break;
      }
      // A quote opens a field only at its start.
      if (q > 0 && s.charCodeAt(q - 1) === COMMA) skip.inQuote = true;
      i = q + 1;
    }
    if (!atEnd) {
      this.drop(keepFrom);
      return this.pos;
    }
    const open = skip.inQuote;
    this.drop(s.length);
    this.skip = undefined;
    this.bad(
      skip.line,
      `${skip.head}…\n`,
      open
        ? `broken quoting: a quoted field opened in the record on line ${skip.line} is never closed (the rest of the file, ${(this.line - skip.line).toLocaleString('en')} lines, is in it)`
        : `a record of more than ${this.maxRecordChars.toLocaleString('en')} characters (line ${skip.line} on): too large for an event`,
    );
    return s.length;
  }

  private lineOf(index: number): number {
    return this.line + countNewlines(this.buf, this.start, index, this.crLines);
  }

  /** Closes the record `buf[start, end)`; a record without a final newline gets one. */
  private endRecord(end: number, suspectUtf8: boolean): number {
    const s = this.buf;
    let text = s.slice(this.start, end);
    const line = this.line;
    this.line += countNewlines(s, this.start, end, this.crLines);
    if (s.charCodeAt(end - 1) !== LF) {
      text += '\n';
      this.line++;
    }
    this.start = end;
    this.quoteAt = -1;
    if (text === '\n' || text === '\r\n') return end;
    // A row of only separators and spaces (`,,,,` as spreadsheets leave them, or `   `) holds no
    // value: blank, as in JSONL, not a bad record (found by probing). Tested only when it starts so.
    const first = text.charCodeAt(0);
    if ((first === COMMA || first === 32 || first === 9 || first === CR) && BLANK_ROW.test(text)) return end;
    if (suspectUtf8 && text.includes('\uFFFD')) {
      this.bad(line, text, 'invalid UTF-8 in this record');
    } else {
      this.goodText += text;
      this.goodLines.push(line);
    }
    return end;
  }

  /** Rejects from the record start to the end of the line holding `from`, and resumes after it. */
  private reject(from: number, detail: string): number {
    const s = this.buf;
    const nl = s.indexOf('\n', from);
    const end = nl === -1 ? s.length : nl + 1;
    const line = this.line;
    const text = s.slice(this.start, end);
    this.line += countNewlines(s, this.start, end, this.crLines);
    this.start = end;
    this.quoteAt = -1;
    this.bad(line, text, `broken quoting: ${detail}`);
    return end;
  }

  private bad(line: number, text: string, reason: string): void {
    this.flushGood();
    this.out.push({ type: 'bad', line, text, reason });
  }

  private flushGood(): void {
    if (this.goodLines.length === 0) return;
    this.out.push({ type: 'good', text: this.goodText, lines: this.goodLines });
    this.goodText = '';
    this.goodLines = [];
  }
}

/** Line breaks in s[from, to): LFs, and with `crLines` also CRs not followed by an LF. */
function countNewlines(s: string, from: number, to: number, crLines = false): number {
  let n = 0;
  for (let i = s.indexOf('\n', from); i !== -1 && i < to; i = s.indexOf('\n', i + 1)) n++;
  if (crLines)
    for (let i = s.indexOf('\r', from); i !== -1 && i < to; i = s.indexOf('\r', i + 1))
      if (s.charCodeAt(i + 1) !== LF) n++;
  return n;
}
