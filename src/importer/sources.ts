import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { readCsv, splitCsvPending } from './csv-reader.js';
import { checkMembers, gunzipMembers, type TrailingBytes } from './gunzip-members.js';
import { parseJsonlPending, readJsonl } from './jsonl-reader.js';
import type { PresetName } from './presets/preset.js';
import type { FileBatch, FileItem, InputFormat, PendingRecords, ReadItem } from './types.js';

export interface InputFile {
  /** A path, or `-` for stdin. */
  path: string;
  /** How messages name it: the path as given (`<stdin>` for `-`). */
  display: string;
  format: InputFormat;
  /** `--preset` or detected: the file is read by that format's mapping module, not the flat mapping. */
  preset?: PresetName | undefined;
}

/** Format from `--format`, else from the extension (`.csv`, `.jsonl`/`.ndjson`/`.json`, each maybe `.gz`). */
export function detectFormat(path: string, flag: string | undefined): InputFormat | { error: string } {
  if (flag !== undefined) {
    if (flag === 'csv' || flag === 'jsonl') return flag;
    return { error: `--format must be csv or jsonl, got "${flag}"` };
  }
  if (path === '-') return { error: 'reading stdin (-) needs --format csv or --format jsonl' };
  const name = basename(path).toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.zip')) return { error: `${path}: ${ZIP_MESSAGE}` };
  // A `.tar.gz` was "cannot tell the format" before its bytes were looked at (probe).
  if (name.endsWith('.tar') || name.endsWith('.tgz')) return { error: `${path}: ${TAR_MESSAGE}` };
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl';
  return { error: `cannot tell the format of ${path} from its name; add --format csv or --format jsonl` };
}

export interface ReadOptions {
  /** Records of the whole run to pass over (a resume), counted across files in order. */
  skip: number;
  /** Called with raw (possibly compressed) bytes as they are read, for progress. */
  onBytes?: ((n: number, chunk: Buffer) => void) | undefined;
  stdin?: NodeJS.ReadableStream | AsyncIterable<Buffer> | undefined;
  chunkBytes?: number | undefined;
  /** Records come as `pending` text, split into fields where they are staged (readCsv, readJsonl). */
  deferFields?: boolean | undefined;
  /** Only the first bytes are read (format detection): a gzip file is not checked through first. */
  headOnly?: boolean | undefined;
}

/**
 * What a bad record says of a gzip input's trailing bytes. They end the input as an error once every
 * complete line before them has been read (the readers hand each chunk's lines on as they come), so a
 * last line they may have cut short is not read as a whole record.
 */
const trailingReason = ({ offset, bytes }: TrailingBytes): string =>
  `${bytes} byte(s) after the gzip data (from byte ${offset}) are not gzip and were not read, nor a last line they may cut short; every record before them was`;

/**
 * A ZIP archive (`PK\x03\x04`), as ChatGPT and Claude send their exports: read as text, it was a
 * rejection of "invalid UTF-8" per line, or "cannot tell the format" (found by probing).
 */
const isZip = (b: Buffer): boolean => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;
export const ZIP_MESSAGE =
  'a ZIP archive, which cas does not read: extract it and import the files inside (of a ChatGPT or Claude export, its conversations.json)';

/**
 * Other inputs cas cannot read, told by their first bytes: UTF-16 text (a spreadsheet's "Unicode
 * text") and the compressions that are not gzip. Each read as an unusable header or one "invalid
 * UTF-8" per line, up to --max-errors, never saying what the file was (found by probing).
 */
/**
 * "BZh", the block size, then the first block's magic (or an empty stream's end): a CSV whose first
 * column is named "BZh…" is still text.
 */
function isBzip2(b: Buffer): boolean {
  const size = b[3] ?? 0;
  const next = b.subarray(4, 10);
  return (
    b.subarray(0, 3).toString('latin1') === 'BZh' &&
    size >= 0x31 &&
    size <= 0x39 &&
    (next.equals(Buffer.from('1AY&SY', 'latin1')) ||
      next.equals(Buffer.from([0x17, 0x72, 0x45, 0x38, 0x50, 0x90])))
  );
}

/** A POSIX tar archive: "ustar" at byte 257 of its first header (an export's `.tar` or `.tar.gz`). */
const isTar = (b: Buffer): boolean => b.length >= 262 && b.toString('latin1', 257, 262) === 'ustar';
const TAR_MESSAGE =
  'a tar archive, which cas does not read: extract it (tar -xf) and import the files inside';

/**
 * A zero byte where text should begin: a download or copy that never got its data (a preallocated or
 * truncated-then-extended file). Read as text, an all-zero `.csv.gz` was a CSV of one empty header and
 * "nothing to import", exit 0 (probe). The first byte decides, so stdin's chunking cannot: the first
 * 512 bytes did, and a producer pausing after a zero byte changed the outcome (probe).
 */
const startsWithZero = (b: Buffer): boolean => b.length > 0 && b[0] === 0;

function unreadableHead(b: Buffer): string | undefined {
  if (isZip(b)) return ZIP_MESSAGE;
  // Each of its lines was refused as a record, ~600 bytes of header apiece, up to --max-errors (probe).
  if (isTar(b)) return TAR_MESSAGE;
  // A noun phrase, as inside gzip it follows "gzip data holding" (probe: it read "holding starts with").
  if (startsWithZero(b))
    return 'zero bytes where text should begin: a download or copy that did not finish? Fetch or copy it again';
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)) {
    return 'UTF-16 text, which cas does not read: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8) and import that';
  }
  const compressed = (name: string, tool: string) =>
    `${name}-compressed, which cas does not read: decompress it (${tool}), or compress it with gzip`;
  if (isBzip2(b)) return compressed('bzip2', 'bunzip2');
  if (b.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])))
    return compressed('xz', 'unxz');
  if (b.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))) return compressed('zstd', 'unzstd');
  return undefined;
}

/**
 * What a file is, when cas cannot read it (unreadableHead), from its first bytes: refused before the
 * run, naming the file, as a ZIP by its name was, where the others were a rejected record (exit 6).
 */
export function unreadableFile(path: string): string | undefined {
  const head = Buffer.alloc(512);
  const fd = openSync(path, 'r');
  try {
    return unreadableHead(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
  } finally {
    closeSync(fd);
  }
}

class UnreadableInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableInputError';
  }
}

/** What a file that stops being readable is reported as: one cas cannot read at all (unreadableHead) as such. */
export function unreadableReason(error: unknown): string {
  if (error instanceof UnreadableInputError) return error.message;
  return `cannot read the rest of the file: ${error instanceof Error ? error.message : String(error)}`;
}

/** Raw bytes of an input, gunzipped when they start with the gzip magic number (so `.gz` and stdin both work). */
export async function* inputBytes(file: InputFile, options: ReadOptions): AsyncGenerator<Buffer> {
  const source: AsyncIterable<Buffer> =
    file.path === '-'
      ? (options.stdin as AsyncIterable<Buffer>)
      : createReadStream(file.path, { highWaterMark: options.chunkBytes ?? 256 * 1024 });
  const counted = countBytes(source, options.onBytes);
  const it = counted[Symbol.asyncIterator]();
  const head = await it.next();
  if (head.done) return;
  const rest = async function* (): AsyncGenerator<Buffer> {
    try {
      yield head.value;
      for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
    } finally {
      // Left early (a gzip member failing its check): the file is closed, not left open.
      await it.return?.();
    }
  };
  const unreadable = unreadableHead(head.value);
  if (unreadable !== undefined) throw new UnreadableInputError(unreadable);
  if (head.value[0] === 0x1f && head.value[1] === 0x8b) {
    // A member whose text fails its check is read before its trailer can tell (and it was stored): a
    // file is checked through first, and read up to such a member. Stdin can be read only once.
    const stopAt =
      file.path === '-' || options.headOnly === true
        ? undefined
        : await checkMembers(createReadStream(file.path, { highWaterMark: 256 * 1024 }));
    const onTrailing = (t: TrailingBytes) => {
      throw new UnreadableInputError(trailingReason(t));
    };
    yield* refusedInside(gunzipMembers(rest(), { onTrailing, stopAt }));
  } else {
    yield* rest();
  }
}

/**
 * Gzip text that is itself no text cas reads, told by its first bytes as a file's are: a `.tar.gz`,
 * or gzip data compressed twice, were "invalid UTF-8" or a header of garbage (found by probing).
 */
async function* refusedInside(text: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  let first = true;
  for await (const chunk of text) {
    if (first) {
      first = false;
      const inside =
        chunk[0] === 0x1f && chunk[1] === 0x8b
          ? 'gzip data compressed twice: decompress it once (gunzip) and import that'
          : unreadableHead(chunk);
      if (inside !== undefined) throw new UnreadableInputError(`gzip data holding ${inside}`);
    }
    yield chunk;
  }
}

async function* countBytes(
  source: AsyncIterable<Buffer | string>,
  onBytes?: (n: number, chunk: Buffer) => void,
) {
  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    onBytes?.(buf.length, buf);
    yield buf;
  }
}

export interface ReadBatch {
  items: ReadItem[];
  /** Records after `items` whose fields are still to be split (`deferFields`). */
  pending?: PendingRecords | undefined;
  /** Ordinal of the next record after this batch (the reader's position). */
  next: number;
}

/**
 * Every record of every input, in order, with global ordinals; a file that cannot be read (missing,
 * corrupt gzip) becomes one bad record naming it, and the run goes on with the next file.
 */
export async function* readInputs(
  files: readonly InputFile[],
  options: ReadOptions,
): AsyncGenerator<ReadBatch> {
  let ordinal = 0;
  const defer = options.deferFields === true;
  for (const file of files) {
    const bytes = inputBytes(file, options);
    const skip = Math.max(0, options.skip - ordinal);
    const batches = file.format === 'csv' ? readCsv(bytes, skip, defer) : readJsonl(bytes, skip, defer);
    let last: FileBatch | undefined;
    try {
      for await (const batch of batches) {
        yield toReadBatch(file, batch, ordinal);
        ordinal += batch.skipped + batch.items.length + (batch.pending?.lines.length ?? 0);
        if (batch.items.length > 0 || (batch.pending?.lines.length ?? 0) > 0) last = batch;
      }
    } catch (error) {
      const reason = unreadableReason(error);
      const line = last === undefined ? 1 : lineAfter(last);
      const bad = { source: { file: file.display, line }, ordinal, reason, text: '' };
      // A re-run hits the same error at the same place, so it takes an ordinal like any record.
      if (ordinal >= options.skip) yield { items: [{ ok: false, bad }], next: ordinal + 1 };
      ordinal++;
    }
  }
}

const lineBreaks = (text: string): number => {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
};

/**
 * The line after a batch's last record, where an error that ends its file is named. A CSV record's
 * quoted fields may span lines: the line after its first, as it was, named a line inside it (probe).
 * Counted only when the error comes, not for every batch read.
 */
function lineAfter(batch: FileBatch): number {
  const { pending } = batch;
  if (pending !== undefined && pending.lines.length > 0) {
    if (pending.format === 'jsonl') return pending.lines.at(-1)! + 1;
    const breaks = lineBreaks(pending.text);
    return pending.lines[0]! + breaks + (pending.text.endsWith('\n') ? 0 : 1);
  }
  const item = batch.items.at(-1)!;
  if (!item.ok) return item.line + lineBreaks(item.text.replace(/\r?\n$/, '')) + 1;
  const { value } = item;
  const inside = value.format === 'csv' ? value.cells.reduce((n, cell) => n + lineBreaks(cell), 0) : 0;
  return item.line + inside + 1;
}

function toReadBatch(file: InputFile, batch: FileBatch, base: number): ReadBatch {
  const first = base + batch.skipped;
  const items = readItems(file.display, batch.items, first);
  const ordinal = first + items.length;
  if (!batch.pending) return { items, next: ordinal };
  const pending = { ...batch.pending, file: file.display, ordinal };
  return { items, pending, next: ordinal + pending.lines.length };
}

function readItems(file: string, items: readonly FileItem[], first: number): ReadItem[] {
  let ordinal = first;
  return items.map((item) => {
    const source = { file, line: item.line };
    const o = ordinal++;
    return item.ok
      ? { ok: true, record: { source, ordinal: o, value: item.value } }
      : { ok: false, bad: { source, ordinal: o, reason: item.reason, text: item.text } };
  });
}

/** A batch's records, pending ones split into fields: what the reader yields without `deferFields`. */
export function batchItems(batch: Pick<ReadBatch, 'items' | 'pending'>): ReadItem[] {
  const { pending } = batch;
  if (!pending) return batch.items;
  const split = pending.format === 'csv' ? splitCsvPending(pending) : parseJsonlPending(pending);
  return [...batch.items, ...readItems(pending.file, split, pending.ordinal)];
}
