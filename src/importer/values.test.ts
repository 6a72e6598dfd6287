import { describe, expect, it } from 'vitest';
import { asNumber, inferScalar } from './values.js';

describe('asNumber', () => {
  it('reads decimal text, signs, fractions and exponents, spaces around them', () => {
    expect(asNumber('n', '42')).toEqual({ ok: true, value: 42 });
    expect(asNumber('n', ' -1.5 ')).toEqual({ ok: true, value: -1.5 });
    expect(asNumber('n', '+.5')).toEqual({ ok: true, value: 0.5 });
    expect(asNumber('n', '2e3')).toEqual({ ok: true, value: 2000 });
    expect(asNumber('n', 7)).toEqual({ ok: true, value: 7 });
  });

  it('refuses hexadecimal, binary and octal text (Number() read "0x10" as 16), naming the field', () => {
    for (const text of ['0x10', '0b11', '0o7', '0X1F', '1_000', 'Infinity', '', ' ']) {
      expect(asNumber('prompt_tokens', text)).toEqual({
        ok: false,
        reason: `prompt_tokens must be a number, got "${text}"`,
      });
    }
  });

  it('refuses a fraction where a whole number is needed', () => {
    expect(asNumber('prompt_tokens', '1.5', true)).toEqual({
      ok: false,
      reason: 'prompt_tokens must be a whole number, got "1.5"',
    });
  });
});

describe('inferScalar', () => {
  it('reads true/false, TRUE/FALSE and True/False as booleans, and other words as text', () => {
    for (const text of ['true', 'TRUE', 'True']) expect(inferScalar(text)).toBe(true);
    for (const text of ['false', 'FALSE', 'False']) expect(inferScalar(text)).toBe(false);
    // Read as before, so a re-imported record keeps its content's id.
    for (const text of ['tRUE', 'fAlse', 'yes', 'truth', 't', 'falsey']) expect(inferScalar(text)).toBe(text);
  });
});
