import { describe, expect, it } from 'vitest';
import { escapeControls, escapeDeep, guardFormula, terminalSafeJson } from './terminal-text.js';

const HOSTILE = '\u001b]0;TITLE\u0007\u001b[2J\rdone\u009b31m\u202eevil\u007f';

describe('escapeControls', () => {
  it('shows every control character as a visible escape and leaves nothing that acts', () => {
    const shown = escapeControls(HOSTILE);
    expect(shown).toBe('\\x1b]0;TITLE\\x07\\x1b[2J\\x0ddone\\x9b31m\\u202eevil\\x7f');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });

  it('keeps LF (tables draw multi-line cells) unless asked for one line; leaves other text alone', () => {
    expect(escapeControls('a\nb\tc')).toBe('a\nb\\x09c');
    expect(escapeControls('a\nb', { oneLine: true })).toBe('a\\nb');
    expect(escapeControls('plan · “pro” ✓ 中文 😀 C:\\dir')).toBe('plan · “pro” ✓ 中文 😀 C:\\dir');
  });

  it('shows the characters that draw nothing, so two ids that look alike read apart; keeps ZWJ', () => {
    expect(escapeControls('alice\u200b\u2060\ufeff\u180e')).toBe('alice\\u200b\\u2060\\ufeff\\u180e');
    expect(escapeControls('👩\u200d💻')).toBe('👩\u200d💻');
    expect(JSON.parse(terminalSafeJson(JSON.stringify('a\u200b')))).toBe('a\u200b');
    expect(terminalSafeJson(JSON.stringify('a\u200b'))).toBe('"a\\u200b"');
  });

  it('escapeDeep reaches keys and nested values, and keeps numbers and nulls', () => {
    expect(escapeDeep({ 'k\u001b': ['\u0007', 1, null, { x: '\u009b' }] })).toEqual({
      'k\\x1b': ['\\x07', 1, null, { x: '\\x9b' }],
    });
  });
});

describe('terminalSafeJson', () => {
  it('escapes what JSON.stringify leaves raw, and parses back to the same value', () => {
    const value = { model: HOSTILE, '\u2028': '\u0085' };
    const text = terminalSafeJson(JSON.stringify(value));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('guardFormula', () => {
  it.each([
    ['=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'],
    ['+cmd|calc', "'+cmd|calc"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', "'\r=1"],
    ['-3.5', '-3.5'],
    ['+1e3', '+1e3'],
    ['plain', 'plain'],
    ['a=b', 'a=b'],
    ['', ''],
  ])('%j → %j', (cell, guarded) => {
    expect(guardFormula(cell)).toBe(guarded);
  });
});
