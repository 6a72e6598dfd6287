import { closeSync, openSync, writeSync } from 'node:fs';

/** Bytes of one piece of the store; a line longer than a third of it gets a piece of its own. */
const PIECE_BYTES = 4 << 20;

/** Bytes gathered before a run's write: one write per megabyte, not one per line. */
const WRITE_BYTES = 1 << 20;

/** Where the store keeps a line: its piece, its first byte there and its length in bytes. */
export interface LinePlace {
  p: number;
  o: number;
  n: number;
}

/**
 * The lines a sort holds, as UTF-8 outside the JavaScript heap. Held as strings, every line survived
 * the young generation's collections until its run was written, and each was copied twice on the
 * way (within the young generation, then into the old one): most of the reading threads' collection
 * time. Here a line's string dies as soon as it is copied in, and only its sort keys stay on the
 * heap. The pieces are kept and filled again after each run, so a long import allocates them once.
 */
export class LineStore {
  private pieces: Buffer[] = [];
  /** The piece being filled, and the bytes used in it. */
  private current = -1;
  private used = 0;

  /** Copies `line` in; the place is valid until `clear()`. */
  add(line: string): LinePlace {
    // A UTF-16 unit takes at most 3 bytes, so this room always takes the line whole.
    const room = line.length * 3;
    let piece = this.pieces[this.current];
    if (piece === undefined || piece.length - this.used < room) {
      piece = this.nextPiece(room);
    }
    const o = this.used;
    const n = piece.write(line, o, 'utf8');
    this.used += n;
    return { p: this.current, o, n };
  }

  /** A held line as text again. */
  text(at: LinePlace): string {
    return this.pieces[at.p]!.toString('utf8', at.o, at.o + at.n);
  }

  /** Writes the lines at `places`, in that order, one per line, to a new file at `path`. */
  writeLines(path: string, places: readonly LinePlace[]): void {
    const fd = openSync(path, 'w', 0o600);
    try {
      const out = Buffer.allocUnsafe(WRITE_BYTES);
      let filled = 0;
      for (const at of places) {
        if (filled + at.n + 1 > out.length) {
          writeAll(fd, out, filled);
          filled = 0;
        }
        const piece = this.pieces[at.p]!;
        if (at.n + 1 > out.length) {
          writeAll(fd, piece.subarray(at.o, at.o + at.n), at.n);
          out[0] = 0x0a;
          filled = 1;
          continue;
        }
        piece.copy(out, filled, at.o, at.o + at.n);
        filled += at.n;
        out[filled++] = 0x0a;
      }
      writeAll(fd, out, filled);
    } finally {
      closeSync(fd);
    }
  }

  /** Forgets every line; the pieces of ordinary size are filled again, an oversized one let go. */
  clear(): void {
    this.pieces = this.pieces.filter((piece) => piece.length === PIECE_BYTES);
    this.current = -1;
    this.used = 0;
  }

  /** Lets every piece go. */
  dispose(): void {
    this.pieces = [];
    this.current = -1;
    this.used = 0;
  }

  private nextPiece(room: number): Buffer {
    this.used = 0;
    if (room > PIECE_BYTES / 3) {
      // Its own piece, right after the current one: the pieces past `current` stay the empty ones kept.
      const own = Buffer.allocUnsafeSlow(room);
      this.pieces.splice(this.current + 1, 0, own);
      this.current += 1;
      return own;
    }
    this.current += 1;
    let piece = this.pieces[this.current];
    if (piece === undefined || piece.length !== PIECE_BYTES) {
      piece = Buffer.allocUnsafeSlow(PIECE_BYTES);
      this.pieces.splice(this.current, 0, piece);
    }
    return piece;
  }
}

function writeAll(fd: number, bytes: Uint8Array, length: number): void {
  let done = 0;
  while (done < length) done += writeSync(fd, bytes, done, length - done);
}
