import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { parseTraits, parseTraitValue } from './identify.js';

describe('parseTraitValue', () => {
  it('types numbers and booleans, and keeps quoted values as strings', () => {
    expect(parseTraitValue('30')).toBe(30);
    expect(parseTraitValue('-1.5')).toBe(-1.5);
    expect(parseTraitValue('true')).toBe(true);
    expect(parseTraitValue('false')).toBe(false);
    // As cas import reads a CSV cell: TRUE was text here and a boolean imported.
    expect(parseTraitValue('TRUE')).toBe(true);
    expect(parseTraitValue('False')).toBe(false);
    expect(parseTraitValue('tRuE')).toBe('tRuE');
    expect(parseTraitValue('truer')).toBe('truer');
    expect(parseTraitValue("'02134'")).toBe('02134');
    // Digits a number would change stay text, as cas import keeps them.
    expect(parseTraitValue('02134')).toBe('02134');
    expect(parseTraitValue('12345678901234567890')).toBe('12345678901234567890');
    expect(parseTraitValue('9007199254740991')).toBe(9007199254740991);
    expect(parseTraitValue('0.5')).toBe(0.5);
    expect(parseTraitValue('0')).toBe(0);
    expect(parseTraitValue('"true"')).toBe('true');
    expect(parseTraitValue('pro')).toBe('pro');
    expect(parseTraitValue('')).toBe('');
    expect(parseTraitValue('1e3')).toBe(1000);
    expect(parseTraitValue('0x10')).toBe('0x10');
  });
});

describe('parseTraits', () => {
  it('merges --traits JSON with --trait pairs, pairs winning', () => {
    expect(parseTraits(['plan=pro', 'seats=3'], '{"plan":"free","region":"eu"}')).toEqual({
      plan: 'pro',
      seats: 3,
      region: 'eu',
    });
    expect(parseTraits(['url=https://x.test/?a=b'], undefined)).toEqual({ url: 'https://x.test/?a=b' });
  });

  it('names the flag on malformed input', () => {
    expect(() => parseTraits(['novalue'], undefined)).toThrow(UsageError);
    expect(() => parseTraits(['novalue'], undefined)).toThrow(/--trait "novalue"/);
    expect(() => parseTraits([], '[1]')).toThrow(/--traits must be a JSON object/);
    expect(() => parseTraits([], '{oops')).toThrow(/--traits/);
  });

  // The wire schema's refusal named neither: "--trait: Invalid input" for both.
  it('names the flag and the key of a value a trait cannot hold', () => {
    expect(() => parseTraits([], '{"plan":"pro","k":null}')).toThrow(
      '--traits: "k" is null; a trait is a string, a number or true/false',
    );
    expect(() => parseTraits([], '{"tags":["a"]}')).toThrow('--traits: "tags" is ["a"]');
    expect(() => parseTraits(['b=1e400'], undefined)).toThrow(
      '--trait "b=1e400": 1e400 is beyond the numbers a trait can hold',
    );
  });

  it('refuses the reserved keys, as the service does (a __proto__ key of --traits was dropped without a word)', () => {
    expect(() => parseTraits([], '{"__proto__":1}')).toThrow('--traits: the key "__proto__" is not allowed');
    expect(() => parseTraits([], '{"plan":"pro","constructor":1}')).toThrow(
      /--traits: the key "constructor"/,
    );
    expect(() => parseTraits(['__proto__=x'], undefined)).toThrow(/--trait: the key "__proto__"/);
    expect(Object.getPrototypeOf(parseTraits(['plan=pro'], undefined))).toBe(Object.prototype);
  });
});
