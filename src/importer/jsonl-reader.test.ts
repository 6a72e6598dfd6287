import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonlPending, readJsonl } from './jsonl-reader.js';
import type { FileItem } from './types.js';

async function* chunks(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function read(input: string | Buffer, size = 1 << 16, skip = 0) {
  const items: FileItem[] = [];
  let skipped = 0;
  const buf = typeof input === 'string' ? Buffer.from(input) : input;
  for await (const batch of readJsonl(chunks(buf, size), skip)) {
    items.push(...batch.items);
    skipped += batch.skipped;
  }
  return { items, skipped };
}

const objectOf = (item: FileItem | undefined) =>
  item?.ok && item.value.format === 'jsonl' ? item.value.value : undefined;

describe('readJsonl', () => {
  it('reads one object per line with its line number, skipping blank lines, at any chunk size', async () => {
    const input = '{"a":1}\n\n   \n{"b":"é🙂"}\r\n{"c":[1,2]}';
    for (const size of [1, 2, 5, 1 << 16]) {
      const { items } = await read(input, size);
      expect(items.map((i) => i.line)).toEqual([1, 4, 5]);
      expect(items.map(objectOf)).toEqual([{ a: 1 }, { b: 'é🙂' }, { c: [1, 2] }]);
    }
  });

  it('rejects bad lines one by one: invalid UTF-8, not JSON, not an object', async () => {
    const input = Buffer.concat([
      Buffer.from('{"ok":1}\n{"bad":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}\n{nope\n[1,2]\n"text"\n{"ok":2}\n'),
    ]);
    const { items } = await read(input, 3);
    expect(items.map((i) => [i.line, i.ok])).toEqual([
      [1, true],
      [2, false],
      [3, false],
      [4, false],
      [5, false],
      [6, true],
    ]);
    expect(items[1]).toMatchObject({ reason: 'invalid UTF-8 in this line' });
    expect(items[2]).toMatchObject({ reason: expect.stringMatching(/^not valid JSON/) });
    expect(items[3]).toMatchObject({
      reason: expect.stringMatching(/^expected a JSON object, got an array; this looks like a JSON array/),
    });
    expect(items[4]).toMatchObject({ reason: 'expected a JSON object, got a string' });
  });

  // Stored by the embedded service's import, which skips the HTTP body parser that refuses them, such
  // a value failed every later read of its property in DuckDB (found by probing).
  it('rejects a line holding a lone surrogate, naming its path; escaped pairs and a quoted backslash pass', async () => {
    const input = [
      '{"traits":{"plan":"\\udc00x"}}',
      '{"e":"\\ud83d\\ude00"}',
      '{"a":["ok","\\ud800"]}',
      '{"b":"\\\\ud800"}',
      '{"\\udfff":1}',
    ].join('\n');
    const { items } = await read(input);
    expect(items.map((i) => (i.ok ? objectOf(i) : i.reason))).toEqual([
      'traits.plan: holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); send valid Unicode',
      { e: '😀' },
      'a[1]: holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); send valid Unicode',
      { b: '\\ud800' },
      expect.stringMatching(/^.*holds a lone UTF-16 surrogate/),
    ]);
  });

  it('says a pretty-printed JSON array is not JSON Lines, at its opening line', async () => {
    const { items } = await read('[\n  {"a": 1},\n  {"a": 2}\n]\n');
    expect(items[0]).toMatchObject({
      ok: false,
      line: 1,
      reason: expect.stringContaining("reads JSON Lines (one record per line): convert it with jq -c '.[]'"),
    });
    expect(items[1]).toMatchObject({ ok: false, reason: expect.not.stringContaining('JSON Lines') });
  });

  // The common layout, the first record on the bracket's line, said only "not valid JSON".
  it('says so too for an array whose first record shares the opening line', async () => {
    const { items } = await read('[{"a": 1},\n{"a": 2}]\n');
    expect(items[0]).toMatchObject({ ok: false, line: 1, reason: expect.stringContaining('JSON Lines') });
    expect(items[1]).toMatchObject({ ok: false, reason: expect.not.stringContaining('JSON Lines') });
  });

  // A CSV given --format jsonl (beside JSON Lines inputs) said only "not valid JSON" on every line.
  it('says a first line of comma-separated names looks like a CSV header, and only there', async () => {
    for (const header of ['timestamp,session_id,user', '"timestamp","session_id","user"']) {
      const { items } = await read(`${header}\n2025-01-01T00:00:00Z,s1,hi\n`);
      expect(items[0]).toMatchObject({
        ok: false,
        line: 1,
        reason: expect.stringContaining('this looks like a CSV header: name the file .csv, or import it'),
      });
      expect(items[1]).toMatchObject({ ok: false, reason: expect.not.stringContaining('CSV') });
    }
    for (const broken of ['{"a": 1, "b":', '[1, 2', 'no commas here']) {
      const first = (await read(`${broken}\n`)).items[0];
      expect(first).toMatchObject({ ok: false, reason: expect.not.stringContaining('CSV header') });
    }
  });

  it('passes over the first `skip` records (blank lines do not count)', async () => {
    const { items, skipped } = await read('{"a":1}\n\n{"a":2}\n{"a":3}\n', 4, 2);
    expect(skipped).toBe(2);
    expect(items.map((i) => i.line)).toEqual([4]);
  });
});

describe('readJsonl deferring the parse (the read helper parses)', () => {
  const line = fc.constantFrom(
    Buffer.from('{"a":1}'),
    Buffer.from('{"b":"é🙂"}\r'),
    Buffer.from('\uFEFF{"bom":true}'),
    Buffer.from('not json'),
    Buffer.from('[1,2]'),
    Buffer.from('   '),
    Buffer.from(''),
    Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
  );

  it('yields, once the pending lines are parsed, exactly the records and skips of a plain read', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 40 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        async (lines, size, skip, finalNewline) => {
          const parts = lines.flatMap((l, i) =>
            i < lines.length - 1 || finalNewline ? [l, Buffer.from('\n')] : [l],
          );
          const buf = Buffer.concat(parts);
          const plain = await read(buf, size, skip);
          const items: FileItem[] = [];
          let skipped = 0;
          for await (const batch of readJsonl(chunks(buf, size), skip, true)) {
            items.push(
              ...batch.items,
              ...(batch.pending?.format === 'jsonl' ? parseJsonlPending(batch.pending) : []),
            );
            skipped += batch.skipped;
          }
          expect({ items, skipped }).toEqual(plain);
        },
      ),
      { numRuns: 300 },
    );
  });
});
