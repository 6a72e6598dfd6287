import { isUtf8 } from 'node:buffer';
import { loneSurrogateProblem } from './lone-surrogates.js';
import type { FileBatch, FileItem, JsonlPending } from './types.js';

const LF = 10;
/** A line beyond this is rejected without being held in memory whole. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** One line → a record, or the reason it is not one. Byte-level UTF-8 check: exact, per line. */
export function parseLine(bytes: Buffer, line: number): FileItem {
  if (!isUtf8(bytes)) {
    return { ok: false, line, reason: 'invalid UTF-8 in this line', text: bytes.toString('utf8') };
  }
  return parseText(bytes.toString('utf8'), line);
}

/** The records of pending lines, parsed: what the reader would have yielded for them. */
export function parseJsonlPending(p: JsonlPending): FileItem[] {
  return p.texts.map((text, i) => parseText(text, p.lines[i] ?? 0));
}

/**
 * A file of one JSON array (its first line `[`, or `[` and its first record) is not JSON Lines; its first
 * rejection says so, instead of only "not valid JSON" for every line.
 */
const ARRAY_HINT =
  "; this looks like a JSON array, and cas reads JSON Lines (one record per line): convert it with jq -c '.[]' file.json > file.jsonl, or use the --preset of its format";

/**
 * A first line of comma-separated names (a CSV under a .jsonl name, or given `--format jsonl` with
 * other inputs): every line was "not valid JSON", which said nothing of why.
 */
const CSV_HINT =
  '; this looks like a CSV header: name the file .csv, or import it in a run of its own with --format csv (--format applies to every input of a run)';
const looksLikeCsvHeader = (text: string): boolean => /^[^{[]*,[^{[]*$/.test(text.trim());

/** A line's decoded text → a record, or the reason it is not one. */
function parseText(decoded: string, line: number): FileItem {
  let text = decoded;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    // `[` alone on its line, or the first line with the first record after it (`[{"a":1},`).
    const opens = text.trim() === '[' || (line === 1 && text.trimStart().startsWith('['));
    const hint = opens ? ARRAY_HINT : line === 1 && looksLikeCsvHeader(text) ? CSV_HINT : '';
    return { ok: false, line, reason: `not valid JSON: ${detail}${hint}`, text };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const hint = Array.isArray(value) ? ARRAY_HINT : '';
    return { ok: false, line, reason: `expected a JSON object, got ${describe(value)}${hint}`, text };
  }
  const lone = loneSurrogateProblem(text, value);
  if (lone !== undefined) return { ok: false, line, reason: lone, text };
  return { ok: true, line, value: { format: 'jsonl', value: value as Record<string, unknown> } };
}

/**
 * JSON Lines → one batch per input chunk. Lines are split on bytes, so each is checked for UTF-8 on
 * its own and a bad byte costs only its line. Blank lines are not records. The first `skip` records
 * (a resume) are counted but not parsed. With `defer`, lines in UTF-8 come as `pending` text, parsed
 * by `parseJsonlPending` on whichever thread stages them (read-helper.ts); a bad line ends its batch,
 * as a batch's items come before its pending lines.
 */
export async function* readJsonl(
  chunks: AsyncIterable<Buffer>,
  skip: number,
  defer = false,
): AsyncGenerator<FileBatch> {
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let oversize = false;
  let line = 1;
  let toSkip = skip;
  /** Batches a bad line closed (its items come before its pending lines), not yielded yet. */
  const closed: FileBatch[] = [];
  /** A record that is not pending: the batch's pending lines, if any, must go first. */
  const item = (batch: FileBatch, value: FileItem): void => {
    if (batch.pending) {
      closed.push({ ...batch });
      batch.items = [];
      batch.skipped = 0;
      batch.pending = undefined;
    }
    batch.items.push(value);
  };
  const take = (bytes: Buffer, batch: FileBatch): void => {
    if (oversize) {
      const text = bytes.subarray(0, 200).toString('utf8');
      item(batch, { ok: false, line, reason: `line longer than ${MAX_LINE_BYTES} bytes`, text });
      oversize = false;
    } else if (isBlank(bytes)) {
      // not a record
    } else if (toSkip > 0) {
      toSkip--;
      batch.skipped++;
    } else if (defer && isUtf8(bytes)) {
      let pending = batch.pending;
      if (pending?.format !== 'jsonl') {
        pending = { format: 'jsonl', texts: [], lines: [] };
        batch.pending = pending;
      }
      pending.texts.push(bytes.toString('utf8'));
      pending.lines.push(line);
    } else {
      item(batch, parseLine(bytes, line));
    }
    line++;
  };
  const ready = function* (batch: FileBatch): Generator<FileBatch> {
    yield* closed.splice(0);
    if (batch.items.length > 0 || batch.skipped > 0 || batch.pending) yield batch;
  };
  for await (const chunk of chunks) {
    const batch: FileBatch = { items: [], skipped: 0 };
    let start = 0;
    for (let nl = chunk.indexOf(LF); nl !== -1; nl = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, nl);
      take(carry.length > 0 ? Buffer.concat([...carry, piece]) : piece, batch);
      carry = [];
      carryBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      if (carryBytes + chunk.length - start > MAX_LINE_BYTES) {
        // Keep only the line's beginning (for the reject file); the rest is dropped as it arrives.
        if (!oversize) carry = [Buffer.concat([...carry, chunk.subarray(start)]).subarray(0, 200)];
        oversize = true;
        carryBytes = MAX_LINE_BYTES;
      } else {
        carry.push(chunk.subarray(start));
        carryBytes += chunk.length - start;
      }
    }
    yield* ready(batch);
  }
  if (carry.length > 0 || oversize) {
    const batch: FileBatch = { items: [], skipped: 0 };
    take(Buffer.concat(carry), batch);
    yield* ready(batch);
  }
}
