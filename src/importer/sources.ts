import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { readCsv } from './csv-reader.js';
import { readJsonl } from './jsonl-reader.js';
import type { PresetName } from './presets/preset.js';
import type { FileBatch, InputFormat, ReadItem } from './types.js';

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
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl';
  return { error: `cannot tell the format of ${path} from its name; add --format csv or --format jsonl` };
}

export interface ReadOptions {
  /** Records of the whole run to pass over (a resume), counted across files in order. */
  skip: number;
  /** Called with raw (possibly compressed) bytes as they are read, for progress. */
  onBytes?: ((n: number) => void) | undefined;
  stdin?: NodeJS.ReadableStream | undefined;
  chunkBytes?: number | undefined;
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
    yield head.value;
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
  };
  if (head.value[0] === 0x1f && head.value[1] === 0x8b) {
    const input = Readable.from(rest());
    const gunzip = createGunzip();
    input.on('error', (error) => gunzip.destroy(error));
    yield* input.pipe(gunzip) as AsyncIterable<Buffer>;
  } else {
    yield* rest();
  }
}

async function* countBytes(source: AsyncIterable<Buffer | string>, onBytes?: (n: number) => void) {
  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    onBytes?.(buf.length);
    yield buf;
  }
}

export interface ReadBatch {
  items: ReadItem[];
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
  for (const file of files) {
    const reader = file.format === 'csv' ? readCsv : readJsonl;
    let lastLine = 0;
    try {
      for await (const batch of reader(inputBytes(file, options), Math.max(0, options.skip - ordinal))) {
        yield toReadBatch(file, batch, ordinal);
        ordinal += batch.skipped + batch.items.length;
        const last = batch.items[batch.items.length - 1];
        if (last) lastLine = last.line;
      }
    } catch (error) {
      const reason = `cannot read the rest of the file: ${error instanceof Error ? error.message : String(error)}`;
      const bad = { source: { file: file.display, line: lastLine + 1 }, ordinal, reason, text: '' };
      // A re-run hits the same error at the same place, so it takes an ordinal like any record.
      if (ordinal >= options.skip) yield { items: [{ ok: false, bad }], next: ordinal + 1 };
      ordinal++;
    }
  }
}

function toReadBatch(file: InputFile, batch: FileBatch, base: number): ReadBatch {
  let ordinal = base + batch.skipped;
  const items: ReadItem[] = batch.items.map((item) => {
    const source = { file: file.display, line: item.line };
    const o = ordinal++;
    return item.ok
      ? { ok: true, record: { source, ordinal: o, value: item.value } }
      : { ok: false, bad: { source, ordinal: o, reason: item.reason, text: item.text } };
  });
  return { items, next: ordinal };
}
