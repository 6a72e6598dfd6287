import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.js';
import { checkedBodyBytes, findForbiddenKey, parseJsonBody } from './json-body.js';

describe('findForbiddenKey', () => {
  it('names the path of a reserved key at any depth', () => {
    expect(findForbiddenKey(JSON.parse('[{"a":1},{"properties":{"__proto__":{"x":1}}}]'))).toBe(
      '[1].properties.__proto__',
    );
    expect(findForbiddenKey({ traits: { constructor: 'x' } })).toBe('traits.constructor');
    expect(findForbiddenKey([[{ prototype: 1 }]])).toBe('[0][0].prototype');
  });

  it('accepts ordinary bodies, including values that merely spell the words', () => {
    expect(findForbiddenKey({ a: '__proto__', b: ['constructor'], c: { d: null } })).toBeUndefined();
  });
});

describe('parseJsonBody', () => {
  it('rejects empty, broken and poisoned bodies with 400', () => {
    for (const text of ['', '  ', '{bad', '{"__proto__":{}}']) {
      expect(() => parseJsonBody(text)).toThrow(ServiceError);
    }
    expect(() => parseJsonBody('{"__proto__":{}}')).toThrow(/__proto__/);
  });

  it('parses valid JSON', () => {
    expect(parseJsonBody('{"id":"u1"}')).toEqual({ id: 'u1' });
  });

  it('finds a forbidden key written with escapes, which the text does not spell out', () => {
    expect(() => parseJsonBody('[{"properties":{"\\u005f_proto__":1}}]')).toThrow(
      /\[0\]\.properties\.__proto__/,
    );
    expect(() => parseJsonBody('{"c\\u006fnstructor":1}')).toThrow(/constructor/);
    expect(parseJsonBody('{"note":"\\u00e9 constructor prototype"}')).toEqual({
      note: 'é constructor prototype',
    });
  });

  it('remembers the UTF-8 size of the text each object or array body came from', () => {
    const body = parseJsonBody('{"a":"é"}');
    expect(checkedBodyBytes(body)).toBe(10);
    expect(checkedBodyBytes(parseJsonBody('[1, 2]', 6))).toBe(6);
    expect(checkedBodyBytes({ a: 'é' })).toBeUndefined();
    expect(checkedBodyBytes(parseJsonBody('"text"'))).toBeUndefined();
  });
});

describe('lone UTF-16 surrogates', () => {
  it('refuses a string or key holding a lone surrogate escape, naming its path', () => {
    expect(() => parseJsonBody('[{"session_id":"s\\ud800"}]')).toThrow(
      /^\[0\]\.session_id: .*lone UTF-16 surrogate/,
    );
    expect(() => parseJsonBody('{"traits":{"k\\udc00":1}}')).toThrow(/traits\.k.*lone/);
    expect(() => parseJsonBody('{"list":["ok","\\uDBFF"]}')).toThrow(/list\[1\]/);
    expect(() => parseJsonBody('"\\ud800"')).toThrow(/\(body\)/);
    // A high surrogate followed by another high one is two lone halves, not a pair.
    expect(() => parseJsonBody('{"id":"\\ud800\\ud800"}')).toThrow(/^id: /);
    // The first in document order is named, at any depth.
    expect(() => parseJsonBody('[{"a":{"b":"\\ud800"}},{"c":"\\ud800"}]')).toThrow(/^\[0\]\.a\.b: /);
  });

  it('keeps well-formed pairs, escaped or not, and text that merely spells \\ud800', () => {
    expect(parseJsonBody('{"id":"\\ud83d\\ude00"}')).toEqual({ id: '😀' });
    expect(parseJsonBody('{"id":"😀"}')).toEqual({ id: '😀' });
    expect(parseJsonBody('{"id":"\\\\ud800"}')).toEqual({ id: '\\ud800' });
  });

  it('reports the path in the issues, as the other 400s do', () => {
    try {
      parseJsonBody('[{},{"user_id":"\\ud800"}]');
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ status: 400, issues: [{ path: '[1].user_id' }] });
    }
  });
});
