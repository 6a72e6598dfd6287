import { createReadStream, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { checkMembers, GzipError, gunzipMembers, type TrailingBytes } from './gunzip-members.js';

const dir = tempDir('cas-gunzip-');
afterAll(() => dir.cleanup());

/** `bytes` in pieces of `size` (the last one shorter), as a file or a pipe hands them over. */
async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function gunzip(bytes: Buffer, size = 64 * 1024): Promise<{ text: string; trailing: TrailingBytes[] }> {
  const trailing: TrailingBytes[] = [];
  const out: Buffer[] = [];
  for await (const b of gunzipMembers(pieces(bytes, size), { onTrailing: (t) => trailing.push(t) }))
    out.push(b);
  return { text: Buffer.concat(out).toString('utf8'), trailing };
}

/** Lines that compress to a few KB and inflate to ~90 KB: several of zlib's 16 KB output chunks. */
const text = (tag: string) =>
  Array.from({ length: 1500 }, (_, i) => `{"tag":"${tag}","i":${i},"x":${(i * 7919) % 1000}}\n`).join('');

/**
 * A member with every optional header field (FEXTRA, FNAME, FCOMMENT, FHCRC), as RFC 1952 lays them
 * out; `headerCrc` overrides the header's checksum, `flags` adds flag bits.
 */
function withAllHeaderFields(plain: string, o: { headerCrc?: number; flags?: number } = {}): Buffer {
  const bare = gzipSync(plain);
  const extra = Buffer.from([4, 0, 0x41, 0x42, 1, 0]);
  const name = Buffer.from('export.jsonl\0', 'latin1');
  const comment = Buffer.from('nightly\0', 'latin1');
  const header = Buffer.from(bare.subarray(0, 10));
  header[3] = 4 | 8 | 16 | 2 | (o.flags ?? 0);
  const fields = Buffer.concat([header, extra, name, comment]);
  const hcrc = Buffer.alloc(2);
  hcrc.writeUInt16LE(o.headerCrc ?? crc32(fields) & 0xffff);
  return Buffer.concat([fields, hcrc, bare.subarray(10)]);
}

describe('gunzipMembers', () => {
  it('reads every member in turn, and zero padding between and after them, in any piece size', async () => {
    const bytes = Buffer.concat([
      gzipSync(text('a')),
      Buffer.alloc(37),
      gzipSync(text('b')),
      Buffer.alloc(5),
    ]);
    for (const size of [1, 7, 10, 4096, 1 << 20]) {
      const got = await gunzip(bytes, size);
      expect(got.text).toBe(text('a') + text('b'));
      expect(got.trailing).toEqual([]);
    }
  });

  it('keeps all the text before trailing bytes that are not gzip, and says where they start', async () => {
    const member = gzipSync(text('a'));
    for (const garbage of ['garbage', '<html>404</html>\n', '\u001f']) {
      const tail = Buffer.from(garbage, 'latin1');
      for (const size of [3, 4096, 1 << 20]) {
        const got = await gunzip(Buffer.concat([member, tail]), size);
        expect(got.text).toBe(text('a'));
        expect(got.trailing).toEqual([{ offset: member.length, bytes: tail.length }]);
      }
    }
  });

  it('skips the optional header fields', async () => {
    const got = await gunzip(Buffer.concat([withAllHeaderFields(text('a')), gzipSync(text('b'))]), 5);
    expect(got.text).toBe(text('a') + text('b'));
  });

  it('refuses a member cut short, a wrong checksum or length, a header cut short, wrong or reserved', async () => {
    const member = gzipSync(text('a'));
    const cases: Array<[Buffer, RegExp]> = [
      [member.subarray(0, member.length - 3), /gzip member at byte 0 is cut short/],
      [member.subarray(0, member.length >> 1), /gzip data is cut short/],
      [
        Buffer.concat([member, member.subarray(0, 6)]),
        new RegExp(`header at byte ${member.length} is cut short`),
      ],
    ];
    const flipped = Buffer.from(member);
    flipped[flipped.length - 8]! ^= 0xff;
    cases.push([flipped, /corrupt \(its checksum does not match\)/]);
    const longer = Buffer.from(member);
    longer[longer.length - 4]! ^= 0x01;
    cases.push([longer, /corrupt \(its length does not match\)/]);
    cases.push([
      withAllHeaderFields(text('a'), { headerCrc: 0xabcd }),
      /header at byte 0 is corrupt \(its checksum/,
    ]);
    cases.push([withAllHeaderFields(text('a'), { flags: 0x20 }), /header at byte 0 sets reserved flags/]);
    for (const [bytes, message] of cases) {
      const read = gunzip(bytes, 1000);
      await expect(read).rejects.toThrow(GzipError);
      await expect(gunzip(bytes, 1000)).rejects.toThrow(message);
    }
  });

  // Read in one pass, a member's text was handed on (and stored) before its trailer told it wrong.
  it('finds the first member whose text fails its check in a first pass; reading stops before it', async () => {
    const good = gzipSync(text('a'));
    const bad = gzipSync(text('b'));
    bad[bad.length - 6]! ^= 0x40;
    const bytes = Buffer.concat([good, Buffer.alloc(3), bad, gzipSync(text('c'))]);
    const stopAt = await checkMembers(pieces(bytes, 999));
    expect(stopAt).toMatchObject({ member: good.length + 3, kind: 'check' });
    const out: Buffer[] = [];
    const read = async () => {
      for await (const b of gunzipMembers(pieces(bytes, 999), { onTrailing: () => undefined, stopAt }))
        out.push(b);
    };
    await expect(read()).rejects.toThrow(`the gzip member at byte ${good.length + 3} is corrupt`);
    expect(Buffer.concat(out).toString()).toBe(text('a'));
    // A cut or trailing bytes are no check failure: the reading pass meets them itself.
    expect(await checkMembers(pieces(Buffer.concat([good, Buffer.from('junk')]), 999))).toBeUndefined();
    expect(await checkMembers(pieces(good.subarray(0, 100), 999))).toBeUndefined();
  });

  // A file stopped at a failing member stayed open: one descriptor per import of it (found by review).
  it('closes its input wherever it stops', async () => {
    const bad = gzipSync(text('b'));
    bad[bad.length - 6]! ^= 0x40;
    const file = join(dir.path, 'stops.gz');
    writeFileSync(file, Buffer.concat([gzipSync(text('a')), bad, gzipSync(text('c'))]));
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) {
      const stopAt = await checkMembers(createReadStream(file));
      const read = gunzipMembers(createReadStream(file), { onTrailing: () => undefined, stopAt });
      await expect(async () => {
        for await (const _ of read) {
          // read up to the failing member
        }
      }).rejects.toThrow(GzipError);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(open()).toBeLessThanOrEqual(before + 2);
  });

  it('hands over text before the member ends (constant memory on a large input)', async () => {
    const member = gzipSync(text('a').repeat(20));
    let first = 0;
    for await (const b of gunzipMembers(pieces(member, 4096), { onTrailing: () => undefined })) {
      first = b.length;
      break;
    }
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(text('a').length * 20);
  });
});
