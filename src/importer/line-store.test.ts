import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { LineStore } from './line-store.js';

const dir = tempDir('cas-lines-');
afterAll(() => dir.cleanup());

describe('LineStore', () => {
  it('gives back each line as it was, characters of several bytes and pairs of surrogates included', () => {
    const store = new LineStore();
    const lines = ['["a",1]', 'é—ü', '😀 emoji', '', 'x'.repeat(1000)];
    const places = lines.map((line) => store.add(line));
    expect(places.map((at) => store.text(at))).toEqual(lines);
    expect(places[1]!.n).toBe(Buffer.byteLength('é—ü'));
  });

  it('writes lines in the order given, across pieces and its write buffer, one a line', () => {
    const store = new LineStore();
    // ~6 MB of lines: more than one piece of 4 MB, and many writes of 1 MB.
    const lines = Array.from({ length: 6000 }, (_, i) => `${i}:${'ü'.repeat(i % 7)}${'y'.repeat(1000)}`);
    const places = lines.map((line) => store.add(line));
    const order = places.map((_, i) => i).reverse();
    const path = join(dir.path, 'run-a.jsonl');
    store.writeLines(
      path,
      order.map((i) => places[i]!),
    );
    expect(readFileSync(path, 'utf8')).toBe(`${order.map((i) => lines[i]).join('\n')}\n`);
  });

  it('holds a line longer than a piece, and one longer than its write buffer, whole', () => {
    const store = new LineStore();
    const long = `[${'é'.repeat(3_000_000)}]`;
    const places = [store.add('first'), store.add(long), store.add('last')];
    expect(places.map((at) => store.text(at))).toEqual(['first', long, 'last']);
    const path = join(dir.path, 'run-b.jsonl');
    store.writeLines(path, [places[2]!, places[1]!, places[0]!]);
    expect(readFileSync(path, 'utf8')).toBe(`last\n${long}\nfirst\n`);
  });

  it('is filled again after clear(), the lines added since read back right', () => {
    const store = new LineStore();
    for (let i = 0; i < 5000; i++) store.add(`old ${i} ${'z'.repeat(1500)}`);
    store.add(`[${'q'.repeat(2_000_000)}]`);
    store.clear();
    const lines = Array.from({ length: 5000 }, (_, i) => `new ${i} ${'w'.repeat(1500)}`);
    const places = lines.map((line) => store.add(line));
    expect(places.map((at) => store.text(at))).toEqual(lines);
    const path = join(dir.path, 'run-c.jsonl');
    store.writeLines(path, places);
    expect(readFileSync(path, 'utf8')).toBe(`${lines.join('\n')}\n`);
  });
});
