import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { batchItems, type InputFile, readInputs } from './sources.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-sources-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every item read from one gzip file with bytes after its data: the last one names where they begin. */
async function read(name: string, text: string, deferFields: boolean) {
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat([gzipSync(text), Buffer.from('<html>503</html>')]));
  const file: InputFile = { path, display: name, format: name.endsWith('.csv.gz') ? 'csv' : 'jsonl' };
  const items = [];
  for await (const batch of readInputs([file], { skip: 0, deferFields })) items.push(...batchItems(batch));
  return items;
}

const HEADER = 'timestamp,user_id,user,assistant\n';

// A CSV record's quoted fields may span lines: the error after them named the line after the last
// record's first line, a line inside that record (probe).
describe('bytes after the gzip data are named at the line after the last record read', () => {
  for (const deferFields of [false, true]) {
    it(`a record of several lines last${deferFields ? ', fields split later' : ''}`, async () => {
      const text = `${HEADER}2025-01-06T10:00:00Z,a,hi,x\n2025-01-06T10:01:00Z,a,"one\ntwo\nthree",y\n`;
      const items = await read(`multi-${deferFields}.csv.gz`, text, deferFields);
      expect(items.map((i) => (i.ok ? i.record.source.line : i.bad.source.line))).toEqual([2, 3, 6]);
      expect(items.at(-1)).toMatchObject({
        ok: false,
        bad: { reason: expect.stringContaining('after the gzip') },
      });
    });

    it(`a broken record of several lines last${deferFields ? ', fields split later' : ''}`, async () => {
      const text = `${HEADER}2025-01-06T10:00:00Z,a,hi,x\n2025-01-06T10:01:00Z,a,"one\ntwo"z,y\n`;
      const items = await read(`broken-${deferFields}.csv.gz`, text, deferFields);
      expect(items.map((i) => (i.ok ? i.record.source.line : i.bad.source.line))).toEqual([2, 3, 5]);
    });

    it(`JSON Lines: one line a record${deferFields ? ', parsed later' : ''}`, async () => {
      const items = await read(`lines-${deferFields}.jsonl.gz`, '{"a":"x\\ny"}\n{"b":1}\n', deferFields);
      expect(items.map((i) => (i.ok ? i.record.source.line : i.bad.source.line))).toEqual([1, 2, 3]);
    });
  }
});
