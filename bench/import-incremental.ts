import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { casSeconds } from './cas-runs.js';
import type { Row } from './report.js';

/**
 * Incremental imports (this round's theme: real exports are incremental and overlapping). The next
 * export of a store's data: its last `half` turns again (already stored) and `half` turns that are
 * new, imported into the store that holds the whole sorted file, against the same delta into an empty
 * store. An import should cost what its own records cost, not what the store already holds.
 */
export interface DeltaImport {
  seconds: number;
  summary: Record<string, unknown>;
}

const DAY_MS = 86_400_000;

/**
 * The delta as CSV: the sorted file's last `half` lines as they are, then its first `half` with
 * their session, conversation and user ids prefixed `next-` and their times 400 days later (the
 * bench's generator writes those four columns first, none quoted).
 */
export async function writeDelta(sortedCsv: string, half: number, out: string): Promise<void> {
  let header = '';
  const first: string[] = [];
  const tail: string[] = [];
  for await (const line of createInterface({ input: createReadStream(sortedCsv) })) {
    if (header === '') {
      header = line;
      continue;
    }
    if (first.length < half) first.push(line);
    tail.push(line);
    if (tail.length > half) tail.shift();
  }
  const next = first.map((line) =>
    line.replace(
      /^([^,]+),([^,]+),([^,]+),([^,]+),/,
      (_, ts: string, s: string, c: string, u: string) =>
        `${new Date(Date.parse(ts) + 400 * DAY_MS).toISOString()},next-${s},next-${c},next-${u},`,
    ),
  );
  writeFileSync(out, `${[header, ...tail, ...next].join('\n')}\n`);
}

export async function incrementalRows(
  sortedCsv: string,
  storeDir: string,
  storeTurns: number,
  dir: string,
  casImport: (file: string, dataDir: string) => Promise<DeltaImport>,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const half of [1_500, 15_000]) {
    const delta = join(dir, `delta-${half}.csv`);
    await writeDelta(sortedCsv, half, delta);
    const fresh = await casImport(delta, join(dir, `delta-fresh-${half}`));
    const into = await casImport(delta, storeDir);
    rows.push({
      figure: `import of ${(2 * half).toLocaleString('en-US')} turns (half stored) into ${storeTurns.toLocaleString('en-US')} / into an empty store`,
      value: fresh.seconds / into.seconds,
      target: 0.8,
      detail: `${into.seconds.toFixed(2)} s vs ${fresh.seconds.toFixed(2)} s; ${Number(into.summary.duplicates)} events already stored`,
    });
    console.log(`  ${rows.at(-1)?.figure}: ${rows.at(-1)?.detail}`);
  }
  return rows;
}

/**
 * A write command into a large store against the same command into an empty one (both opened once
 * before, untimed): `cas identify` of a new user, alternated three times, medians compared. Its close
 * read the row-group layout of every table, 110-210 ms at 2.17M events, where it now reads only the
 * tables it wrote (store/vacuum-policy.ts).
 */
export async function writeCommandRow(storeDir: string, storeTurns: number, emptyDir: string): Promise<Row> {
  const identify = (dataDir: string, user: string): Promise<number> =>
    casSeconds(['identify', '--id', user, '--trait', 'plan=pro', '--data-dir', dataDir]);
  await identify(storeDir, 'bench-warm');
  await identify(emptyDir, 'bench-warm');
  const into: number[] = [];
  const empty: number[] = [];
  for (let i = 0; i < 3; i++) {
    into.push(await identify(storeDir, `bench-${i}`));
    empty.push(await identify(emptyDir, `bench-${i}`));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1] ?? Number.NaN;
  const row: Row = {
    figure: `cas identify into the store of ${storeTurns.toLocaleString('en-US')} turns / into an empty store`,
    value: median(empty) / median(into),
    target: 0.8,
    detail: `${median(into).toFixed(2)} s vs ${median(empty).toFixed(2)} s, medians of 3`,
  };
  console.log(`  ${row.figure}: ${row.detail}`);
  return row;
}
