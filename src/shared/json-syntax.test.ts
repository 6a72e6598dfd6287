import { describe, expect, it } from 'vitest';
import { jsonSyntaxError, parseJsonText } from './json-syntax.js';

const why = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonSyntaxError(text, error);
  }
  throw new Error('parsed');
};

describe('jsonSyntaxError', () => {
  it('gives the line and column where parsing stopped, not a character position', () => {
    expect(why('{\n  "a": 1,\n}')).toBe('line 3, column 1: Expected double-quoted property name');
    expect(why('{"a": 1}}')).toMatch(/^line 1, column 9: /);
    expect(why('{\n  "a": ')).toBe('line 2, column 8: Unexpected end of JSON input');
  });

  it("throws the caller's error with that reason", () => {
    expect(() => parseJsonText('{"a":1,}', (w) => new TypeError(`f.json: ${w}`))).toThrow(
      /^f\.json: line 1, column 8: Expected double-quoted property name$/,
    );
    // V8 gives some errors no position: the reason alone, then.
    expect(() => parseJsonText('[1,]', (w) => new TypeError(w))).toThrow(/^Unexpected token/);
    expect(parseJsonText('{"a":[1]}', () => new Error('no'))).toEqual({ a: [1] });
  });
});
