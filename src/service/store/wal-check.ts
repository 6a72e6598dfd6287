import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Whether DuckDB can replay a write-ahead log whole, checked before DuckDB opens the database.
 *
 * DuckDB (1.x, `wal_replay.cpp`) treats any *deserialization* failure while replaying as a torn tail
 * (a write cut short by a crash) and silently skips everything from that point on; a checksum mismatch
 * is an error it does report. So garbage over the WAL's first bytes makes it skip every transaction in
 * the log, committed and acknowledged ones included, and start as if nothing had happened. A torn
 * tail is the one case where skipping is right: the cut entry's transaction never finished committing,
 * so no client was told it was stored.
 *
 * Layout (WAL version 2): a version entry written without a checksum (`64 00 62` = field 100, entry
 * type 98 = WAL_VERSION; then field 101 = the version), then entries of `[u64 size][u64 checksum]
 * [size bytes]` to the end of the file. We walk the sizes: a log that ends exactly at an entry
 * boundary, or inside a last entry whose size is plausible, replays whole (DuckDB verifies the
 * checksums itself). Anything else is damage DuckDB would not report.
 */
export type WalVerdict = { ok: true } | { ok: false; reason: string };

const VERSION_ENTRY_START = Buffer.from([0x64, 0x00, 0x62]);
/** The version entry as DuckDB 1.x writes it for a version-2 log with no optional fields. */
const VERSION_2_ENTRY = Buffer.from([0x64, 0x00, 0x62, 0x65, 0x00, 0x02, 0xff, 0xff]);
const ENTRY_HEADER = 16;
/** No real entry comes near this (a data chunk is at most 2,048 rows); garbage read as a u64 does. */
const MAX_PLAUSIBLE_ENTRY = 2 ** 40;

export function checkWal(path: string): WalVerdict {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true };
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { ok: true };
    const head = Buffer.alloc(VERSION_2_ENTRY.length);
    const got = readSync(fd, head, 0, head.length, 0);
    if (got < VERSION_ENTRY_START.length || !head.subarray(0, 3).equals(VERSION_ENTRY_START)) {
      return {
        ok: false,
        reason: `the write-ahead log does not begin with DuckDB's version entry, so DuckDB would skip all ${size} bytes of it`,
      };
    }
    // Another layout (an older version, or optional fields): DuckDB's own checks are all we have.
    if (got < VERSION_2_ENTRY.length || !head.equals(VERSION_2_ENTRY)) return { ok: true };
    return walkEntries(fd, size);
  } finally {
    closeSync(fd);
  }
}

function walkEntries(fd: number, size: number): WalVerdict {
  const header = Buffer.alloc(ENTRY_HEADER);
  let position = VERSION_2_ENTRY.length;
  while (position < size) {
    // A header cut short is a torn tail.
    if (size - position < ENTRY_HEADER) return { ok: true };
    readSync(fd, header, 0, ENTRY_HEADER, position);
    const length = header.readBigUInt64LE(0);
    if (length > BigInt(MAX_PLAUSIBLE_ENTRY)) {
      return {
        ok: false,
        reason: `the write-ahead log entry at byte ${position} of ${size} is unreadable, so DuckDB would skip the ${size - position} bytes from there`,
      };
    }
    position += ENTRY_HEADER + Number(length);
  }
  return { ok: true };
}
