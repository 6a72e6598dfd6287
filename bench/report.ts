/**
 * The benchmarks' table (issue 16): each figure with its target and OK or SHORT, printed at the end
 * of the run so the whole table reads at a glance. `lower`: the figure must not exceed its target.
 */
export interface Row {
  figure: string;
  value: number;
  target: number;
  lower?: boolean;
  detail?: string;
}

export function verdict(row: Row): 'OK' | 'SHORT' {
  return (row.lower ? row.value <= row.target : row.value >= row.target) ? 'OK' : 'SHORT';
}

export function printTable(title: string, rows: readonly Row[]): void {
  const width = Math.max(...rows.map((r) => r.figure.length), 10);
  console.log(`\n${title}`);
  console.log(`${'figure'.padEnd(width)}  ${'value'.padStart(8)}  ${'target'.padStart(9)}  result`);
  for (const r of rows) {
    const value = r.value >= 100 ? r.value.toFixed(0) : r.value.toFixed(2);
    const target = `${r.lower ? '<=' : '>='} ${r.target}`;
    console.log(
      `${r.figure.padEnd(width)}  ${value.padStart(8)}  ${target.padStart(9)}  ${verdict(r)}${r.detail ? `  (${r.detail})` : ''}`,
    );
  }
}
