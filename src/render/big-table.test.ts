import Table from 'cli-table3';
import { describe, expect, it } from 'vitest';
import { drawTable } from './big-table.js';

/** What cli-table3 draws for the whole table at once (quadratic, so only for a few hundred rows). */
function whole(options: Table.TableConstructorOptions, rows: Table.HorizontalTableRow[]): string {
  const table = new Table(options);
  table.push(...rows);
  return table.toString();
}

const rows = (n: number): Table.HorizontalTableRow[] =>
  Array.from({ length: n }, (_, i) => [
    `label ${'é'.repeat(i % 7)}${i}`,
    String(i * 37),
    '█'.repeat(i % 23),
    '漢'.repeat(i % 3),
  ]);

describe('drawTable', () => {
  it('draws a long table in pieces, byte for byte what one cli-table3 table draws', () => {
    const head = ['Label', 'Users', '', 'CJK'];
    const ruled = { head };
    const unruled = {
      head,
      colAligns: ['left', 'right', 'left', 'left'] as Table.HorizontalAlignment[],
      chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    };
    const coloured = { head, style: { head: ['cyan'], border: ['grey'] } };
    for (const options of [ruled, unruled, coloured]) {
      for (const n of [0, 1, 199, 200, 201, 650]) {
        expect(drawTable(options, rows(n)), `${n} rows`).toBe(whole(options, rows(n)));
      }
    }
  });

  it('keeps given widths, wrapped cells included', () => {
    const options = { head: ['a', 'b'], colWidths: [8, 12], wordWrap: true };
    const wide = Array.from(
      { length: 450 },
      (_, i): Table.HorizontalTableRow => [`w${i}`, `some words ${i} to wrap here`],
    );
    expect(drawTable(options, wide)).toBe(whole(options, wide));
  });
});
