import { describe, expect, it } from 'vitest';
import { type JsonStreamItem, readJsonStream } from './json-stream.js';

async function read(text: string | Buffer, chunk = 7, max?: number): Promise<JsonStreamItem[]> {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
  }
  const out: JsonStreamItem[] = [];
  for await (const items of readJsonStream(chunks(), max)) out.push(...items);
  return out;
}

const values = (items: JsonStreamItem[]) => items.map((i) => (i.ok ? i.value : `! ${i.reason}`));

describe('readJsonStream', () => {
  it('yields a top-level array element by element, whatever the chunking, with start lines', async () => {
    const text = '\uFEFF[\n {"a": "x]}\\"y"},\n [1, [2]],\n "s", 3.5 , true,null\n]\n';
    for (const chunk of [1, 2, 5, 1000]) {
      const items = await read(text, chunk);
      expect(values(items)).toEqual([{ a: 'x]}"y' }, [1, [2]], 's', 3.5, true, null]);
      expect(items.map((i) => [i.line, i.index])).toEqual([
        [2, 0],
        [3, 1],
        [4, 2],
        [4, 3],
        [4, 4],
        [4, 5],
      ]);
    }
  });

  it('yields each top-level value of JSON Lines and of pretty-printed documents one after another', async () => {
    expect(values(await read('{"a":1}\n{"b":2}\n\n'))).toEqual([{ a: 1 }, { b: 2 }]);
    const pretty = '{\n  "resourceSpans": []\n}\n{\n  "resourceSpans": [1]\n}';
    const items = await read(pretty, 3);
    expect(values(items)).toEqual([{ resourceSpans: [] }, { resourceSpans: [1] }]);
    expect(items.map((i) => i.line)).toEqual([1, 4]);
  });

  it('costs a bad element only itself when its brackets balance, and names what ends too early', async () => {
    const items = await read('[{"a":1}, {"b":,}, {"c":3}]');
    expect(values(items)).toEqual([{ a: 1 }, expect.stringMatching(/^! not valid JSON/), { c: 3 }]);
    expect(values(await read('[{"a":1}, {"b":2'))).toEqual([{ a: 1 }, '! the file ends inside this value']);
    expect(values(await read('[{"a":1}'))).toEqual([
      { a: 1 },
      '! the file ends before the JSON array is closed',
    ]);
    expect(values(await read('[1] x'))).toEqual([1, '! text after the end of the JSON array']);
    expect(values(await read(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d])))).toEqual([
      '! invalid UTF-8 in this value',
    ]);
  });

  it('in JSON Lines, a line cut short or not JSON costs only itself, wherever it breaks', async () => {
    const good = '{"resourceSpans":[{"spans":[{"name":"a b"}]}]}';
    const cutInString = good.slice(0, 32);
    const cutOutside = good.slice(0, 18);
    for (const chunk of [1, 3, 1000]) {
      const inString = await read(`${cutInString}\n${good}\n${good}\n`, chunk);
      expect(values(inString)).toEqual([
        expect.stringMatching(/^! a string runs into the end of its line/),
        JSON.parse(good),
        JSON.parse(good),
      ]);
      expect(inString.map((i) => [i.line, i.index])).toEqual([
        [1, 0],
        [2, 1],
        [3, 2],
      ]);
      const outside = await read(`${cutOutside}\r\n${good}\r\n${good}`, chunk);
      expect(values(outside)).toEqual([
        '! this value breaks off: line 2 starts another',
        JSON.parse(good),
        JSON.parse(good),
      ]);
      const words = await read(`this is not json at all\n${good}\n42\n"s"\n`, chunk);
      expect(values(words)).toEqual([expect.stringMatching(/^! not valid JSON/), JSON.parse(good), 42, 's']);
      expect(values(await read(`${good}\n${cutInString}`, chunk))).toEqual([
        JSON.parse(good),
        expect.stringMatching(/^! the file ends inside a string/),
      ]);
    }
    // Pretty-printed documents nest indented, so they still read whole.
    const pretty = `${JSON.stringify(JSON.parse(good), null, 2)}\n${JSON.stringify({ b: [{ c: 1 }] }, null, 1)}\n`;
    expect(values(await read(pretty, 5))).toEqual([JSON.parse(good), { b: [{ c: 1 }] }]);
  });

  it('refuses an element holding a lone surrogate, naming its path, and goes on', async () => {
    const items = await read('[{"title":"a\\ud800"}, {"title":"\\ud83d\\ude00"}]');
    expect(values(items)).toEqual([
      '! title: holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); send valid Unicode',
      { title: '😀' },
    ]);
  });

  it('refuses a value beyond the size limit without keeping it, and goes on', async () => {
    const items = await read(`[{"a":"${'x'.repeat(100)}"}, 2]`, 8, 50);
    expect(values(items)).toEqual(['! value longer than 50 bytes', 2]);
    expect(items[0]?.ok === false && items[0].text.length).toBeLessThanOrEqual(200);
  });
});
