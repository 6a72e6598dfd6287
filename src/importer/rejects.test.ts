import { describe, expect, it } from 'vitest';
import { rejectionLine } from './rejects.js';
import { parseTimestamp } from './timestamps.js';
import { asNumber } from './values.js';

const line = (reason: string) =>
  rejectionLine({ source: { file: 'a.jsonl', line: 7 }, reason, record: {}, seq: 0 });

describe('rejectionLine', () => {
  it('keeps a quoted value whole and visibly bounded: its quotes and line breaks escaped', () => {
    const time = parseTimestamp('bad\nspoof.jsonl:99: FAKE LINE', 'UTC');
    expect(time?.ok).toBe(false);
    const shown = line(time?.ok === false ? time.reason : '');
    expect(shown).toBe(
      'a.jsonl:7: timestamp "bad\\nspoof.jsonl:99: FAKE LINE" is not ISO 8601 or epoch seconds/milliseconds',
    );
    const tokens = asNumber('prompt_tokens', '1"\ns:98: "2');
    expect(line(tokens.ok ? '' : tokens.reason)).toBe(
      'a.jsonl:7: prompt_tokens must be a number, got "1\\"\\ns:98: \\"2"',
    );
  });

  it('is one line, spaces and tabs as they were (the writer escapes a tab)', () => {
    expect(line('x  y\tz\nw\r\nv')).toBe('a.jsonl:7: x  y\tz\\nw\\nv');
  });
});
