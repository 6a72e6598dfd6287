import { isUtf8 } from 'node:buffer';
import type { FileBatch, FileItem } from './types.js';

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
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, line, reason: `not valid JSON: ${detail}`, text };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, line, reason: `expected a JSON object, got ${describe(value)}`, text };
  }
  return { ok: true, line, value: { format: 'jsonl', value: value as Record<string, unknown> } };
}

/**
 * JSON Lines → one batch per input chunk. Lines are split on bytes, so each is checked for UTF-8 on
 * its own and a bad byte costs only its line. Blank lines are not records. The first `skip` records
 * (a resume) are counted but not parsed.
 */
export async function* readJsonl(chunks: AsyncIterable<Buffer>, skip: number): AsyncGenerator<FileBatch> {
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let oversize = false;
  let line = 1;
  let toSkip = skip;
  const take = (bytes: Buffer, batch: FileBatch): void => {
    if (oversize) {
      batch.items.push({
        ok: false,
        line,
        reason: `line longer than ${MAX_LINE_BYTES} bytes`,
        text: bytes.subarray(0, 200).toString('utf8'),
      });
      oversize = false;
    } else if (!isBlank(bytes)) {
      if (toSkip > 0) {
        toSkip--;
        batch.skipped++;
      } else {
        batch.items.push(parseLine(bytes, line));
      }
    }
    line++;
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
    if (batch.items.length > 0 || batch.skipped > 0) yield batch;
  }
  if (carry.length > 0 || oversize) {
    const batch: FileBatch = { items: [], skipped: 0 };
    take(Buffer.concat(carry), batch);
    if (batch.items.length > 0 || batch.skipped > 0) yield batch;
  }
}
