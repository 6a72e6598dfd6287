import { describe, expect, it } from 'vitest';
import { fromLine, stage, toLine } from './staging.js';
import type { MappedRecord } from './types.js';

const mapped = (over: Partial<MappedRecord> = {}): MappedRecord => ({
  source: { file: 'a "b"\\c.csv', line: 7 },
  ordinal: 6,
  kind: 'turn',
  event: {
    type: 'turn',
    timestamp: '2025-01-01T00:00:00.000Z',
    properties: { user: 'quote " backslash \\ line\u2028sep ✓ 😀', n: 1.5, nested: [null, true] },
  },
  ms: 1735689600000,
  session: 's1',
  conversation: undefined,
  key: 'u1',
  inSession: true,
  raw: { format: 'csv', header: ['user_id', 'text'], cells: ['u1', 'x,"y"'] },
  ...over,
});

describe('spill lines', () => {
  const cases: Array<[string, MappedRecord, boolean]> = [
    ['a record with its raw value kept', mapped(), true],
    ['raw not kept', mapped(), false],
    ['no time, no key, no session', mapped({ ms: undefined, key: undefined, session: undefined }), false],
  ];
  it.each(cases)(
    'are the JSON of the array of keys, event and source (%s), and read back the same',
    (_, m, keep) => {
      const s = stage(m, keep);
      const line = toLine(s);
      expect(line).toBe(
        JSON.stringify([s.g, s.ms, s.r, s.h, s.kind, s.event, s.key, s.source.file, s.source.line, s.raw]),
      );
      const back = fromLine(line);
      // Its size, the event's JSON when staged, is its whole line's once read back: a bound of it.
      expect(back).toEqual({ ...s, json: undefined, bytes: line.length });
      expect(s.bytes).toBe(JSON.stringify(s.event).length);
      // A record read back has no JSON of its own: its line is made from the event itself, the same.
      expect(toLine(back)).toBe(line);
    },
  );
});
