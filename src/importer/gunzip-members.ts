import { crc32, createInflateRaw } from 'node:zlib';

/** Bytes after the last gzip member that start no member: where they begin in the file, and how many. */
export interface TrailingBytes {
  offset: number;
  bytes: number;
}

/** A gzip stream cas cannot read past (a bad header, a truncated member, a wrong checksum). */
export class GzipError extends Error {
  constructor(
    message: string,
    /** Where the member it was found in starts. */
    readonly member: number,
    /** `check`: the member inflated whole, but its text is not what was compressed. */
    readonly kind: 'format' | 'check' = 'format',
  ) {
    super(message);
    this.name = 'GzipError';
  }
}

export interface GunzipOptions {
  /** Bytes after the last member that start no member, once all text before them has been yielded. */
  onTrailing: (trailing: TrailingBytes) => void;
  /**
   * A member a first pass (`checkMembers`) found failing its check: reading stops before it. Read
   * in one pass, its text is handed on before its trailer can tell it wrong.
   */
  stopAt?: GzipError | undefined;
}

/**
 * The text of every gzip member of `input`, one after another, as `gzip -d` reads them. Zero bytes
 * between or after members are padding. Bytes after the last member that start no member (a tool's
 * padding, a download's error page) go to `onTrailing`, unread, once everything before them has been
 * yielded: Node's gunzip stream fails on them, and its failure lost the text it had decoded from the
 * same read, up to 16 KB (30 lines of 2,000 in a probe).
 */
export async function* gunzipMembers(
  input: AsyncIterable<Buffer>,
  options: GunzipOptions,
): AsyncGenerator<Buffer> {
  const bytes = new ByteQueue(input[Symbol.asyncIterator]());
  try {
    yield* members(bytes, options);
  } finally {
    // A file stopped at a member (or left early) stays open otherwise: one descriptor per input.
    await bytes.close();
  }
}

async function* members(bytes: ByteQueue, options: GunzipOptions): AsyncGenerator<Buffer> {
  for (let count = 0; ; count++) {
    while ((await bytes.fill(1)) && bytes.at(0) === 0) bytes.take(1);
    if (bytes.length === 0) return;
    const at = bytes.offset;
    if (at === options.stopAt?.member) throw options.stopAt;
    const isMember = (await bytes.fill(2)) && bytes.at(0) === 0x1f && bytes.at(1) === 0x8b;
    if (!isMember) {
      if (count === 0) throw new GzipError('not gzip data', at);
      options.onTrailing({ offset: at, bytes: await bytes.drain() });
      return;
    }
    await skipHeader(bytes);
    const check = { crc: 0, size: 0 };
    for await (const text of inflateMember(bytes, at)) {
      check.crc = crc32(text, check.crc);
      check.size = (check.size + text.length) % 2 ** 32;
      yield text;
    }
    if (!(await bytes.fill(8))) throw new GzipError(`the gzip member at byte ${at} is cut short`, at);
    const trailer = bytes.take(8);
    const wrong =
      trailer.readUInt32LE(0) !== check.crc
        ? 'checksum'
        : trailer.readUInt32LE(4) !== check.size
          ? 'length'
          : undefined;
    if (wrong !== undefined) {
      const message = `the gzip member at byte ${at} is corrupt (its ${wrong} does not match)`;
      throw new GzipError(message, at, 'check');
    }
  }
}

/**
 * The first member of a gzip input whose text fails its check (checksum or length), read through
 * once and kept nowhere; undefined when none does, or when the input breaks off before one does (a
 * cut, bad data, trailing bytes: the reading pass stops there itself, after what came before).
 */
export async function checkMembers(input: AsyncIterable<Buffer>): Promise<GzipError | undefined> {
  try {
    for await (const _ of gunzipMembers(input, { onTrailing: () => undefined })) {
      // Only the members' checks matter here.
    }
  } catch (error) {
    if (error instanceof GzipError && error.kind === 'check') return error;
  }
  return undefined;
}

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;
/** Flag bits RFC 1952 reserves: gzip refuses a member that sets them (once, encryption). */
const RESERVED = 0xe0;

/** RFC 1952's member header: ten bytes, then the optional fields its flags name. */
async function skipHeader(bytes: ByteQueue): Promise<void> {
  const at = bytes.offset;
  const refuse = (why: string) => new GzipError(`the gzip header at byte ${at} ${why}`, at);
  const short = () => refuse('is cut short');
  const read: Buffer[] = [];
  const take = (n: number): Buffer => read[read.push(bytes.take(n)) - 1]!;
  if (!(await bytes.fill(10))) throw short();
  const header = take(10);
  if (header[2] !== 8) throw refuse('names an unknown compression method');
  const flags = header[3]!;
  if (flags & RESERVED) throw refuse('sets reserved flags (an encrypted or unknown format)');
  if (flags & FEXTRA) {
    if (!(await bytes.fill(2))) throw short();
    const length = take(2).readUInt16LE(0);
    if (!(await bytes.fill(length))) throw short();
    take(length);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    for (;;) {
      if (!(await bytes.fill(1))) throw short();
      if (take(1)[0] === 0) break;
    }
  }
  if (flags & FHCRC) {
    if (!(await bytes.fill(2))) throw short();
    const stored = bytes.take(2).readUInt16LE(0);
    if (stored !== (crc32(Buffer.concat(read)) & 0xffff))
      throw refuse('is corrupt (its checksum does not match)');
  }
}

/**
 * One member's deflate data, inflated. A raw inflater stops at the end of the deflate stream and
 * counts the input it used (`bytesWritten`), so what it was given past that end goes back to `bytes`.
 */
async function* inflateMember(bytes: ByteQueue, member: number): AsyncGenerator<Buffer> {
  const inflater = createInflateRaw();
  let given = 0;
  let ended = false;
  inflater.once('end', () => {
    ended = true;
  });
  const feed = (async () => {
    for (;;) {
      const chunk = await bytes.next();
      if (chunk === undefined || ended) {
        if (chunk !== undefined) bytes.unshift(chunk);
        inflater.end();
        return;
      }
      given += chunk.length;
      await new Promise<void>((resolve, reject) =>
        inflater.write(chunk, (error) => (error ? reject(error) : resolve())),
      );
      // The deflate stream ended inside this chunk: its rest belongs to what follows.
      if (inflater.bytesWritten < given) {
        bytes.unshift(chunk.subarray(chunk.length - (given - inflater.bytesWritten)));
        inflater.end();
        return;
      }
    }
  })();
  feed.catch(() => undefined);
  try {
    for await (const text of inflater as AsyncIterable<Buffer>) yield text;
  } catch (error) {
    throw corrupt(error, member);
  } finally {
    inflater.destroy();
  }
  try {
    await feed;
  } catch (error) {
    throw corrupt(error, member);
  }
}

function corrupt(error: unknown, member: number): GzipError {
  const message = error instanceof Error ? error.message : String(error);
  // zlib's words for deflate data that stops before its end.
  if (message === 'unexpected end of file') return new GzipError('the gzip data is cut short', member);
  return new GzipError(`the gzip data is corrupt (${message})`, member);
}

/** Input chunks with look-ahead: a member's header is read a byte at a time, the rest a chunk at a time. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;
  /** Bytes of the input taken so far: where the next byte sits in the file. */
  offset = 0;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  /** Whether `n` bytes are buffered, reading more as needed; false at the end of the input. */
  async fill(n: number): Promise<boolean> {
    while (this.length < n) {
      const r = await this.source.next();
      if (r.done) return false;
      this.chunks.push(r.value);
      this.length += r.value.length;
    }
    return true;
  }

  at(i: number): number | undefined {
    for (const chunk of this.chunks) {
      if (i < chunk.length) return chunk[i];
      i -= chunk.length;
    }
    return undefined;
  }

  /** The next `n` bytes, which `fill(n)` made sure of. */
  take(n: number): Buffer {
    const whole = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = whole.length > n ? [whole.subarray(n)] : [];
    this.length -= n;
    this.offset += n;
    return whole.subarray(0, n);
  }

  /** The next buffered chunk, or the next read; undefined at the end. */
  async next(): Promise<Buffer | undefined> {
    const buffered = this.chunks.shift();
    if (buffered !== undefined) {
      this.length -= buffered.length;
      this.offset += buffered.length;
      return buffered;
    }
    const r = await this.source.next();
    if (r.done) return undefined;
    this.offset += r.value.length;
    return r.value;
  }

  /** Puts bytes taken by `next` back in front. */
  unshift(chunk: Buffer): void {
    this.chunks.unshift(chunk);
    this.length += chunk.length;
    this.offset -= chunk.length;
  }

  /** Lets the input go (its file is closed), wherever reading stopped. */
  async close(): Promise<void> {
    this.chunks = [];
    this.length = 0;
    await this.source.return?.();
  }

  /** Reads the input to its end; returns how many bytes were left. */
  async drain(): Promise<number> {
    let n = this.length;
    this.chunks = [];
    this.length = 0;
    for (let r = await this.source.next(); !r.done; r = await this.source.next()) n += r.value.length;
    this.offset += n;
    return n;
  }
}
