import { endianness } from 'node:os';
import { DuckDBDataChunk, type DuckDBType, DuckDBTypeId, type DuckDBValue } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import type { Queryable } from './database.js';

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

/**
 * A value for one cell of an appended row, in the store's own terms: text (JSON columns take JSON
 * text), a number, a boolean or null; a timestamp column takes epoch milliseconds.
 */
export type CellValue = string | number | boolean | null;

/** Text and timestamp vectors are filled in place (below); the vectors' layout is native-endian. */
const RAW = endianness() === 'LE';

/**
 * Inserts rows given column by column, in the table's column order, inside the connection's open
 * transaction (they commit or roll back with it). This is DuckDB's appender, one data chunk per 2,048
 * rows: the fastest way into DuckDB from Node (whole vectors cross the binding, not single values).
 * It lives in the store so that the ingest and identity code stay free of DuckDB (issue 16: a
 * PostgreSQL store follows, where this would be COPY).
 */
export async function appendColumns(
  q: Pick<Queryable, 'use'>,
  table: string,
  columns: ReadonlyArray<readonly CellValue[]>,
): Promise<void> {
  if ((columns[0]?.length ?? 0) === 0) return;
  await appendChunks(q, table, (types) => chunksOf(table, types, columns));
}

/**
 * One appender of `table` on the connection: it takes the chunks `chunksFor` gives for the table's
 * column types, then closes (its rows join the connection's open transaction).
 */
export async function appendChunks(
  q: Pick<Queryable, 'use'>,
  table: string,
  chunksFor: (types: readonly DuckDBType[]) => Iterable<DuckDBDataChunk>,
): Promise<void> {
  await q.use(async (connection) => {
    const appender = await connection.createAppender(table);
    try {
      const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
      for (const chunk of chunksFor(types)) appender.appendDataChunk(chunk);
    } finally {
      appender.closeSync();
    }
  });
}

/** Rows given column by column as data chunks of `types`, made as they are iterated; touches no connection. */
export function* chunksOf(
  table: string,
  types: readonly DuckDBType[],
  columns: ReadonlyArray<readonly CellValue[]>,
): Generator<DuckDBDataChunk> {
  if (types.length !== columns.length) {
    throw new Error(`${table} has ${types.length} columns, ${columns.length} given`);
  }
  const rowCount = columns[0]?.length ?? 0;
  for (let from = 0; from < rowCount; from += CHUNK_ROWS) {
    const size = Math.min(CHUNK_ROWS, rowCount - from);
    const chunk = DuckDBDataChunk.create(types, size);
    for (const [i, type] of types.entries()) fillColumn(chunk, i, type, columns[i]!, from, size);
    yield chunk;
  }
}

function fillColumn(
  chunk: DuckDBDataChunk,
  index: number,
  type: DuckDBType,
  column: readonly CellValue[],
  from: number,
  size: number,
): void {
  const id = type.typeId;
  if (
    RAW &&
    (id === DuckDBTypeId.VARCHAR || id === DuckDBTypeId.TIMESTAMP_TZ || id === DuckDBTypeId.DOUBLE)
  ) {
    const vector = duckdb.data_chunk_get_vector(chunk.chunk, index);
    const fill: Fill = { vector, column, from, size, nulls: new Nulls(size), type };
    if (id === DuckDBTypeId.VARCHAR) writeTexts(fill);
    else if (id === DuckDBTypeId.DOUBLE) writeDoubles(fill);
    else writeTimestamps(fill);
    fill.nulls.write(vector);
    return;
  }
  const values: DuckDBValue[] = column.slice(from, from + size);
  if (id === DuckDBTypeId.BIGINT) {
    for (let i = 0; i < size; i++) {
      const v = values[i];
      if (v === null || v === undefined) continue;
      if (typeof v !== 'number') throw refused(type, v);
      values[i] = BigInt(Math.trunc(v));
    }
  }
  chunk.setColumnValues(index, values);
}

const refused = (type: DuckDBType, v: unknown): Error =>
  new Error(
    `a ${type.toString()} column takes ${type.typeId === DuckDBTypeId.VARCHAR ? 'text' : 'numbers'}, not ${typeof v}`,
  );

/** Rows `from` to `from + size` of a column, into one vector of a chunk. */
interface Fill {
  vector: duckdb.Vector;
  column: readonly CellValue[];
  from: number;
  size: number;
  nulls: Nulls;
  type: DuckDBType;
}

/** A vector's validity mask, written only when some row is NULL. */
class Nulls {
  private mask: Uint8Array<ArrayBuffer> | undefined;
  constructor(private readonly size: number) {}
  set(row: number): void {
    this.mask ??= new Uint8Array(Math.ceil(this.size / 64) * 8).fill(0xff);
    this.mask[row >> 3]! &= ~(1 << (row & 7));
  }
  write(vector: duckdb.Vector): void {
    if (!this.mask) return;
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, this.mask.buffer, 0, this.mask.byteLength);
  }
}

const INLINE = 12;

/**
 * Text into a VARCHAR vector of `duckdb_string_t`s (16 bytes: the length, then up to 12 bytes inline,
 * or a 4-byte prefix and a pointer into the vector's own string heap). Short ASCII is written inline;
 * a repeat (a batch's project, session, user, event name) copies the 16 bytes of the row it repeats;
 * every other text is joined end to end with the others, and the lot crosses the binding as one text
 * (DuckDB copies it into the vector's heap), each row's slot pointing at its own bytes there. In
 * profiles of a 100k-turn import, building the columns took the service's thread 1.07 s with a call
 * per value (node-api's vectors), 0.53-0.57 s with a call per text neither short ASCII nor a repeat,
 * and 0.39-0.42 s this way (`npm run bench -- ingest` times this path as its data-chunk yardstick).
 */
function writeTexts({ vector, column, from, size, nulls, type }: Fill): void {
  const slots = new Int32Array(size * 4);
  const slotBytes = new Uint8Array(slots.buffer);
  const joined = new JoinedTexts(vector, slots);
  // Per row: the earlier row it repeats (-1: none).
  const repeats = new Int32Array(size).fill(-1);
  let previous: string | undefined;
  let previousRow = -1;
  for (let i = 0; i < size; i++) {
    const v = column[from + i];
    if (v === null || v === undefined) {
      nulls.set(i);
      continue;
    }
    if (typeof v !== 'string') throw refused(type, v);
    if (v === previous) {
      repeats[i] = previousRow;
      continue;
    }
    previous = v;
    previousRow = i;
    if (v.length <= INLINE && isAscii(v)) {
      // The slot is fresh (zeros): the bytes past the text stay zero, as in DuckDB's own strings.
      slots[i * 4] = v.length;
      for (let k = 0; k < v.length; k++) slotBytes[i * 16 + 4 + k] = v.charCodeAt(k);
      continue;
    }
    joined.add(i, v);
  }
  joined.flush();
  // In row order: a repeat's source row is earlier, so its slot is final by then.
  for (let i = 0; i < size; i++) {
    const source = repeats[i]!;
    if (source >= 0) copySlot(slots, i, slots, source);
  }
  duckdb.copy_data_to_vector(vector, 0, slots.buffer, 0, size * 16);
}

function isAscii(v: string): boolean {
  for (let k = 0; k < v.length; k++) if (v.charCodeAt(k) > 0x7f) return false;
  return true;
}

/** Bytes of joined text that cross the binding in one call (a chunk of large events takes several). */
const SEGMENT_BYTES = 1 << 20;

/**
 * The texts of a vector that cross the binding, joined. `flush` encodes them as one text, assigns it
 * to the first of their rows and reads back where DuckDB's heap holds it; each row's slot then gets
 * its length, and its bytes inline (up to 12) or its 4-byte prefix and a pointer to them.
 */
class JoinedTexts {
  private texts: string[] = [];
  private rows: number[] = [];
  private length = 0;

  private readonly slotBytes: Uint8Array;

  constructor(
    private readonly vector: duckdb.Vector,
    private readonly slots: Int32Array,
  ) {
    this.slotBytes = new Uint8Array(slots.buffer);
  }

  add(row: number, text: string): void {
    // UTF-16 units: a byte each in ASCII, up to three otherwise.
    if (this.length > 0 && 3 * (this.length + text.length) > SEGMENT_BYTES) this.flush();
    this.texts.push(text);
    this.rows.push(row);
    this.length += text.length;
  }

  /** Where each text's bytes start in the encoded whole: at its offset in the text when all ASCII. */
  private starts(encoded: Buffer): number[] {
    const starts: number[] = [];
    const ascii = encoded.length === this.length;
    let at = 0;
    for (const text of this.texts) {
      starts.push(at);
      at += ascii ? text.length : Buffer.byteLength(text, 'utf8');
    }
    if (at !== encoded.length) throw new Error('a text changed its UTF-8 length while appended');
    starts.push(at);
    return starts;
  }

  flush(): void {
    const first = this.rows[0];
    if (first === undefined) return;
    const encoded = Buffer.from(this.texts.join(''), 'utf8');
    const starts = this.starts(encoded);
    duckdb.vector_assign_string_element_len(this.vector, first, encoded);
    const data = duckdb.vector_get_data(this.vector, (first + 1) * 16);
    // A pointer when the whole is longer than 12 bytes, as it is whenever some row's text is.
    const words = new Int32Array(data.buffer, data.byteOffset + first * 16, 4);
    const low = words[2]! >>> 0;
    const high = words[3]!;
    for (let k = 0; k < this.rows.length; k++) {
      const t = this.rows[k]! * 4;
      const start = starts[k]!;
      const length = starts[k + 1]! - start;
      this.slots[t] = length;
      const shown = length <= INLINE ? length : 4;
      for (let b = 0; b < shown; b++) this.slotBytes[t * 4 + 4 + b] = encoded[start + b]!;
      if (length <= INLINE) continue;
      const sum = low + start;
      this.slots[t + 2] = sum | 0;
      this.slots[t + 3] = sum >= TWO_32 ? high + 1 : high;
    }
    this.texts = [];
    this.rows = [];
    this.length = 0;
  }
}

function copySlot(to: Int32Array, row: number, from: Int32Array, fromRow: number): void {
  const t = row * 4;
  const f = fromRow * 4;
  to[t] = from[f]!;
  to[t + 1] = from[f + 1]!;
  to[t + 2] = from[f + 2]!;
  to[t + 3] = from[f + 3]!;
}

const TWO_32 = 2 ** 32;

/** Epoch ms into a TIMESTAMPTZ vector (int64 microseconds), without a value object per cell. */
function writeTimestamps(fill: Fill): void {
  const { vector, size, type } = fill;
  const words = new Int32Array(size * 2);
  for (let i = 0; i < size; i++) {
    const v = numberAt(fill, i);
    if (v === undefined) continue;
    const micros = Math.trunc(v) * 1000;
    if (!Number.isSafeInteger(micros))
      throw new Error(`${v} is out of range for a ${type.toString()} column`);
    const high = Math.floor(micros / TWO_32);
    words[i * 2] = micros - high * TWO_32;
    words[i * 2 + 1] = high;
  }
  duckdb.copy_data_to_vector(vector, 0, words.buffer, 0, size * 8);
}

/**
 * Numbers into a DOUBLE vector as they are (the events' id hashes: a value object per cell cost the
 * service's thread ~0.1 s per 300k-turn import).
 */
function writeDoubles(fill: Fill): void {
  const values = new Float64Array(fill.size);
  for (let i = 0; i < fill.size; i++) values[i] = numberAt(fill, i) ?? 0;
  duckdb.copy_data_to_vector(fill.vector, 0, values.buffer, 0, fill.size * 8);
}

/** Row `i`'s number, or undefined for a NULL, which it marks in the vector's mask. */
function numberAt({ column, from, nulls, type }: Fill, i: number): number | undefined {
  const v = column[from + i];
  if (v === null || v === undefined) {
    nulls.set(i);
    return undefined;
  }
  if (typeof v !== 'number') throw refused(type, v);
  return v;
}
