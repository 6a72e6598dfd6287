import { describe, expect, it } from 'vitest';
import { breakLongWords } from './break-words.js';

describe('breakLongWords', () => {
  it('breaks only words wider than the width, at the width, keeping every character', () => {
    const text = `see ${'x'.repeat(25)} end`;
    const broken = breakLongWords(text, 10);
    expect(broken).toBe(`see ${'x'.repeat(10)}\n${'x'.repeat(10)}\n${'x'.repeat(5)} end`);
    expect(broken.replace(/\n/g, '')).toBe(text);
    expect(breakLongWords('short words only here', 10)).toBe('short words only here');
  });

  it('counts wide characters as two columns and never splits a grapheme', () => {
    expect(breakLongWords('中文中文中文', 4)).toBe('中文\n中文\n中文');
    expect(breakLongWords('👩\u200d💻👩\u200d💻👩\u200d💻', 4)).toBe('👩\u200d💻👩\u200d💻\n👩\u200d💻');
    expect(breakLongWords('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301e\u0301\ne\u0301');
  });
});
