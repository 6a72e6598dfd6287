/**
 * cli-table3 wraps a cell at its spaces, and cuts a word longer than the column with "…": a URL or a
 * token in a listing narrowed to the terminal lost its end (found by probing). Such words are broken
 * here first, at the column's width, by line breaks, which the table keeps as they are.
 */

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Columns a grapheme takes, rounded up: East Asian wide and fullwidth characters and emoji count 2.
 * Overcounting only makes a broken line a little short; undercounting would let the table cut it.
 */
function columnsOf(grapheme: string): number {
  const cp = grapheme.codePointAt(0) ?? 0;
  if (cp < 0x1100) return 1;
  const wide =
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x2600 && cp <= 0x27bf) ||
    cp >= 0x1f000;
  return wide ? 2 : 1;
}

function breakWord(word: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const { segment } of segmenter.segment(word)) {
    const w = columnsOf(segment);
    if (used + w > width && line !== '') {
      lines.push(line);
      line = '';
      used = 0;
    }
    line += segment;
    used += w;
  }
  lines.push(line);
  return lines.join('\n');
}

/** `text` with each word wider than `width` columns broken into lines of at most `width`. */
export function breakLongWords(text: string, width: number): string {
  if (width < 1 || text.length <= width) return text;
  return text
    .split(/(\s+)/)
    .map((part, i) => (i % 2 === 1 || part.length <= width / 2 ? part : breakWord(part, width)))
    .join('');
}
