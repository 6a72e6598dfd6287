import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineBreaks, PARSE_OPTIONS, splitRecords, splitWellFormed } from './csv-fields.js';
import { CsvSplitter } from './csv-splitter.js';

/** csv-parse with the reader's options, line breaks in fields read as LF: the reference for every comparison. */
const reference = (text: string) => (parse(text, PARSE_OPTIONS) as string[][]).map((r) => r.map(lineBreaks));

/** Text that breaks CSV in every way the splitter knows: quotes anywhere, CR alone, empty lines. */
const piece = fc.constantFrom('a', 'é', '🙂', ' ', '"', '""', ',', '\n', '\r', '\r\n', 'x,"y\nz",w\n', '"q"');

/** The well-formed runs the splitter passes on, from arbitrary text cut at arbitrary places. */
function goodTexts(pieces: string[], size: number): string[] {
  const splitter = new CsvSplitter();
  const text = pieces.join('');
  const segments = [];
  for (let i = 0; i < text.length; i += size) segments.push(...splitter.push(text.slice(i, i + size), false));
  segments.push(...splitter.end(false));
  return segments.flatMap((s) => (s.type === 'good' ? [s.text] : []));
}

describe('splitRecords', () => {
  it('splits every run the splitter passes on exactly as csv-parse does, without falling back', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), fc.integer({ min: 1, max: 40 }), (pieces, size) => {
        for (const text of goodTexts(pieces, size)) {
          expect(splitWellFormed(text)).toEqual(reference(text));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('splits any text as csv-parse does: what the fast path does not expect goes to csv-parse', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        let expected: string[][] | Error;
        try {
          expected = reference(text);
        } catch (error) {
          expected = error as Error;
        }
        if (expected instanceof Error) expect(() => splitRecords(text)).toThrow();
        else expect(splitRecords(text)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('unescapes quoted fields and keeps what is not a delimiter', () => {
    const text = 'a,"b,""c""\nd",e\r\n"",x"y,\r,\n';
    expect(splitWellFormed(text)).toEqual([
      ['a', 'b,"c"\nd', 'e'],
      ['', 'x"y', '\n', ''],
    ]);
  });

  it('reads a line break in a field as LF, whatever it was written as', () => {
    const lf = 'a,"one\ntwo"\n';
    expect(splitRecords(lf)).toEqual([['a', 'one\ntwo']]);
    // unix2dos: every LF, the one inside the quotes too, becomes CR LF; a Mac export: CR.
    expect(splitRecords('a,"one\r\ntwo"\r\n')).toEqual(splitRecords(lf));
    expect(splitRecords('a,"one\rtwo"\n')).toEqual(splitRecords(lf));
    expect(splitRecords('a,"one\r\r\ntwo"\n')).toEqual([['a', 'one\n\ntwo']]);
  });

  it('declines text the splitter never passes on', () => {
    expect(splitWellFormed('a,b')).toBeUndefined();
    expect(splitWellFormed('"a"b\n')).toBeUndefined();
    expect(splitWellFormed('"a\n')).toBeUndefined();
  });
});
