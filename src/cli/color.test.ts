import { describe, expect, it } from 'vitest';
import { wantsColor } from './color.js';

describe('wantsColor', () => {
  it('colours a terminal unless a flag or the environment says not to', () => {
    expect(wantsColor(true, undefined, {})).toBe(true);
    expect(wantsColor(false, undefined, {})).toBe(false);
    expect(wantsColor(true, false, {})).toBe(false);
    expect(wantsColor(true, undefined, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColor(true, undefined, { FORCE_COLOR: '0' })).toBe(false);
    expect(wantsColor(true, undefined, { TERM: 'dumb' })).toBe(false);
    expect(wantsColor(true, undefined, { TERM: 'xterm-256color', NO_COLOR: '' })).toBe(true);
  });
});
