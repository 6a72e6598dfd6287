import { splitRecords } from './csv-fields.js';
import { CsvSplitter, type Segment } from './csv-splitter.js';
import type { CsvPending, FileBatch, FileItem } from './types.js';

const REPLACEMENT_BYTES = Buffer.from([0xef, 0xbf, 0xbd]);

/**
 * Whether a decoded chunk holds U+FFFD that the bytes did not spell out themselves, i.e. bytes that
 * are not UTF-8. Counting keeps the common case (no U+FFFD at all) to one `includes`.
 */
export function hasInvalidUtf8(bytes: Buffer, text: string): boolean {
  if (!text.includes('\uFFFD')) return false;
  let decoded = 0;
  for (let i = text.indexOf('\uFFFD'); i !== -1; i = text.indexOf('\uFFFD', i + 1)) decoded++;
  let literal = 0;
  for (let i = bytes.indexOf(REPLACEMENT_BYTES); i !== -1; i = bytes.indexOf(REPLACEMENT_BYTES, i + 3))
    literal++;
  return decoded > literal;
}

interface State {
  header: string[] | undefined;
  /** Set when the header itself is unusable: every later record is then skipped silently. */
  headerError: string | undefined;
  toSkip: number;
}

/**
 * CSV with a header row → batches per input chunk. Records are counted from the first row after
 * the header; the first `skip` of them (a resume) are passed over without being parsed into fields.
 * With `defer`, well-formed records after the header and the skipped ones come as `pending` text,
 * split into fields by `splitCsvPending` on whichever thread stages them (read-helper.ts).
 */
export async function* readCsv(
  chunks: AsyncIterable<Buffer>,
  skip: number,
  defer = false,
): AsyncGenerator<FileBatch> {
  const splitter = new CsvSplitter();
  const decoder = new TextDecoder('utf-8');
  const state: State = { header: undefined, headerError: undefined, toSkip: skip };
  let suspect = false;
  let first = true;
  const endings = new LineEndings();
  for await (const chunk of chunks) {
    let text = decoder.decode(chunk, { stream: true });
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    suspect ||= hasInvalidUtf8(chunk, text);
    const read = endings.read(text);
    splitter.crLines = endings.crOnly === true;
    yield* toBatches(splitter.push(read, suspect), state, defer);
  }
  const tail = endings.read(decoder.decode()) + endings.end();
  suspect ||= tail.includes('\uFFFD');
  yield* toBatches([...splitter.push(tail, suspect), ...splitter.end(suspect)], state, defer);
}

/**
 * Lines ended by CR alone (classic Mac OS; Excel's "CSV (Macintosh)") read as lines: the file's first
 * line break decides. Read as they were, the whole file was one header row, and nothing was imported,
 * without a word (found by probing). Only line ends change here: a CR or CR LF inside a quoted field
 * stays for the splitter to count as a line, and csv-fields.ts reads it as LF in any file. Quotes are
 * followed as the splitter follows them: one opens a field only at its start, and `""` inside one is
 * a quote.
 */
class LineEndings {
  /** Undefined until the first line break is read. */
  crOnly: boolean | undefined;
  /** A CR that ended a chunk before the first line break: a CR LF may be cut between chunks. */
  private held = '';
  /** Outside quotes (at a field's start or not), inside a quoted field, or just after a quote in one. */
  private quoting: 'start' | 'out' | 'in' | 'quote' = 'start';

  read(chunk: string): string {
    const text = this.held + chunk;
    this.held = '';
    if (this.crOnly === undefined) {
      const at = text.search(/[\r\n]/);
      if (at === -1) return text;
      if (text.charCodeAt(at) === 10) this.crOnly = false;
      else if (at + 1 < text.length) this.crOnly = text.charCodeAt(at + 1) !== 10;
      else {
        this.held = '\r';
        return text.slice(0, -1);
      }
    }
    return this.crOnly ? this.lineEnds(text) : text;
  }

  private lineEnds(text: string): string {
    let out = '';
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.quoting === 'quote') {
        // `""`: a quote in the field, which goes on; anything else follows the field's closing quote.
        this.quoting = c === 34 ? 'in' : 'out';
        if (c === 34) continue;
      }
      if (this.quoting === 'in') {
        if (c === 34) this.quoting = 'quote';
        continue;
      }
      if (c === 34 && this.quoting === 'start') this.quoting = 'in';
      else if (c === 13) {
        out += `${text.slice(from, i)}\n`;
        from = i + 1;
        this.quoting = 'start';
      } else this.quoting = c === 44 || c === 10 ? 'start' : 'out';
    }
    return out + text.slice(from);
  }

  end(): string {
    const held = this.held;
    this.held = '';
    return held === '' ? '' : '\n';
  }
}

/** One batch of the segments, or, deferring, a batch ending at each run of well-formed records. */
function* toBatches(segments: Segment[], state: State, defer: boolean): Generator<FileBatch> {
  let batch: FileBatch = { items: [], skipped: 0 };
  for (const seg of segments) {
    const ready = state.header !== undefined && state.headerError === undefined && state.toSkip === 0;
    if (defer && ready && seg.type === 'good') {
      batch.pending = { format: 'csv', header: state.header ?? [], text: seg.text, lines: seg.lines };
      yield batch;
      batch = { items: [], skipped: 0 };
      continue;
    }
    addSegment(seg, state, batch);
  }
  if (batch.items.length > 0 || batch.skipped > 0) yield batch;
}

function addSegment(seg: Segment, state: State, batch: FileBatch): void {
  if (seg.type === 'good') {
    goodRecords(seg, state, batch);
  } else if (state.header === undefined && state.headerError === undefined) {
    state.headerError = looksLikeJson([seg.text])
      ? JSON_HEADER
      : `the header row is unusable (${seg.reason}); file skipped`;
    batch.items.push({ ok: false, line: seg.line, reason: state.headerError, text: seg.text });
  } else if (state.headerError === undefined && !skipOne(state, batch)) {
    batch.items.push({ ok: false, line: seg.line, reason: seg.reason, text: seg.text });
  }
}

function skipOne(state: State, batch: FileBatch): boolean {
  if (state.toSkip <= 0) return false;
  state.toSkip--;
  batch.skipped++;
  return true;
}

function goodRecords(seg: Extract<Segment, { type: 'good' }>, state: State, batch: FileBatch): void {
  if (state.headerError !== undefined) return;
  // A resume passes over whole segments without splitting them into fields.
  if (state.header !== undefined && state.toSkip >= seg.lines.length) {
    state.toSkip -= seg.lines.length;
    batch.skipped += seg.lines.length;
    return;
  }
  const rows = splitRecords(seg.text);
  for (let i = 0; i < rows.length; i++) {
    const cells = rows[i]!;
    const line = seg.lines[i] ?? 0;
    if (state.header === undefined) {
      const header = cells.map((c) => c.trim());
      const dup = header.find((name, j) => name !== '' && header.indexOf(name) !== j);
      if (dup !== undefined) {
        state.headerError = `the header names column "${dup}" twice; file skipped`;
        batch.items.push({ ok: false, line, reason: state.headerError, text: cells.join(',') });
        return;
      }
      if (looksLikeJson(header)) {
        state.headerError = JSON_HEADER;
        batch.items.push({ ok: false, line, reason: state.headerError, text: cells.join(',') });
        return;
      }
      const other = otherSeparator(header);
      if (other !== undefined) {
        // Each row was refused as having no kind or user, which said nothing of why (found by probing).
        state.headerError = `the header is one column, "${header[0]}": cas reads comma-separated CSV, and this file looks separated by ${other}; save it as CSV with commas; file skipped`;
        batch.items.push({ ok: false, line, reason: state.headerError, text: cells.join(',') });
        return;
      }
      state.header = header;
      continue;
    }
    if (skipOne(state, batch)) continue;
    batch.items.push(record(cells, state.header, line));
  }
}

/**
 * A header that is a JSON value (JSON Lines under a .csv name): its first record was taken for the
 * header and each other one refused as having no user, which said nothing of why (found by probing).
 */
const looksLikeJson = (header: readonly string[]): boolean => /^\s*[{[]/.test(header[0] ?? '');
const JSON_HEADER =
  'the header row is JSON: this looks like JSON Lines, not CSV; name the file .jsonl, or import it in a run of its own with --format jsonl (--format applies to every input of a run); file skipped';

/** A header of one column holding another separator (a spreadsheet's European CSV, TSV): its name. */
function otherSeparator(header: readonly string[]): string | undefined {
  if (header.length !== 1) return undefined;
  const only = header[0] ?? '';
  if (only.includes(';')) return 'semicolons';
  if (only.includes('\t')) return 'tabs';
  return undefined;
}

/** The records of a pending run, split into fields: what the reader would have yielded for them. */
export function splitCsvPending(p: CsvPending): FileItem[] {
  const rows = splitRecords(p.text);
  return rows.map((cells, i) => record(cells, p.header, p.lines[i] ?? 0));
}

/** The columns a header leaves unnamed (`a,b,`: a trailing comma), found once per header. */
const namelessOf = new WeakMap<readonly string[], number[]>();

function nameless(header: readonly string[]): number[] {
  let found = namelessOf.get(header);
  if (found === undefined) {
    found = header.flatMap((name, j) => (name === '' ? [j] : []));
    namelessOf.set(header, found);
  }
  return found;
}

function record(cells: string[], header: readonly string[], line: number): FileItem {
  if (cells.length !== header.length) {
    return {
      ok: false,
      line,
      reason: `expected ${header.length} fields (as in the header), got ${cells.length}`,
      text: cells.join(','),
    };
  }
  // A value no name can map would be dropped without a word; empty cells there (`1,2,`) are fine.
  for (const j of nameless(header)) {
    if (cells[j]?.trim() !== '') {
      return {
        ok: false,
        line,
        reason: `field ${j + 1} holds a value but the header leaves that column unnamed; name it in the header`,
        text: cells.join(','),
      };
    }
  }
  return { ok: true, line, value: { format: 'csv', header, cells } };
}
