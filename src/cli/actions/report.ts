import { type Stats, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { prepareChart } from '../../commands/chart.js';
import type { ChartEnv } from '../../commands/chart-flags.js';
import { UsageError } from '../../commands/errors.js';
import { planReport, runReport } from '../../commands/report.js';
import type { SharedFlags } from '../../commands/report-charts.js';
import { chartLibrary } from '../../render/html/chart-library.js';
import { buildPage } from '../../render/html/page.js';
import { fileErrorReason, pathProblem } from '../../shared/file-errors.js';
import { orderedFlags, text, texts } from '../chart-values.js';
import { type Action, withConnection } from '../context.js';
import { describeFailure, EXIT } from '../exit-codes.js';
import { openerFor, startOpener } from '../open-file.js';
import { parseChartWords, splitWords } from '../report-spec.js';
import { systemTimeZone } from '../system-zone.js';
import { sourceOf } from './chart-html.js';

/** `cas report`: flags → planned charts (all checked before connecting) → the page, written to --out. */

function sharedFlags(f: Record<string, unknown>): SharedFlags {
  const sequence = orderedFlags(f.sequence);
  if (sequence[0]?.flag === 'where') {
    throw new UsageError(
      `--where ${sequence[0].value}: in cas report, --where filters the --performed or --intent before it`,
      'e.g. --performed "Purchase" --where "amount > 10"',
    );
  }
  return {
    range: { from: text(f.from), to: text(f.to), last: text(f.last), period: text(f.period), tz: text(f.tz) },
    userWhere: texts(f.userWhere) ?? [],
    cohort: text(f.cohort),
    sequence,
  };
}

function specs(f: Record<string, unknown>): string[][] {
  return (texts(f.chart) ?? []).map((spec) => {
    const words = splitWords(spec);
    if (words.length === 0)
      throw new UsageError('--chart "": give a chart, e.g. --chart "sessions --trait plan"');
    return words;
  });
}

/** The out file's directory must exist, and the file not be a folder: said before anything is fetched. */
function outPath(value: string): string {
  // resolve('') is the working directory, which read "--out : it is a folder" (found by probing).
  if (value.trim() === '') throw new UsageError('--out must not be empty: name a file, or - for stdout');
  const path = resolve(value);
  let dir: Stats | undefined;
  try {
    dir = statSync(dirname(path));
  } catch (error) {
    const why = pathProblem(error);
    if (why !== undefined) throw new UsageError(`--out ${value}: ${why}`);
  }
  if (dir === undefined)
    throw new UsageError(`--out ${value}: the directory ${dirname(path)} does not exist`);
  if (!dir.isDirectory()) throw new UsageError(`--out ${value}: ${dirname(path)} is a file, not a directory`);
  let out: Stats | undefined;
  try {
    out = statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    throw new UsageError(`--out ${value}: ${pathProblem(error) ?? fileErrorReason(error)}`);
  }
  if (out?.isDirectory()) {
    throw new UsageError(
      `--out ${value}: it is a folder; name a file in it, e.g. ${join(value, 'report.html')}`,
    );
  }
  return path;
}

function writeOut(path: string, value: string, page: string): void {
  try {
    writeFileSync(path, page);
  } catch (error) {
    throw new UsageError(`--out ${value}: cannot write it: ${fileErrorReason(error)}`);
  }
}

export const report: Action = async (ctx) => {
  const f = ctx.flags;
  const env: ChartEnv = {
    now: new Date(),
    defaultTz: systemTimeZone(),
  };
  const parse = (argv: readonly string[], label: string) => {
    try {
      const { chart, flags } = parseChartWords(argv, label);
      return prepareChart({ chart, flags, env });
    } catch (error) {
      const inSpec = label.startsWith('--chart') && error instanceof UsageError;
      if (!inSpec || error.message.startsWith(label)) throw error;
      throw new UsageError(`${label}: ${error.message}`, error.hint);
    }
  };
  const options = { specs: specs(f), shared: sharedFlags(f), trait: text(f.trait), parse };
  const outValue = text(f.out) ?? 'report.html';
  // `-`: the page on stdout, as a pipe to another tool expects.
  const out = outValue === '-' ? undefined : outPath(outValue);
  // Flags are checked before connecting: a typo must not first start the embedded service.
  planReport(options);
  const result = await withConnection(ctx, (c) =>
    runReport({ ...options, source: sourceOf(ctx, c), now: env.now }, c),
  );
  const page = buildPage(result.page, chartLibrary());
  for (const note of result.notes) ctx.log(note);
  if (out === undefined) ctx.out(page);
  else {
    writeOut(out, outValue, page);
    ctx.out(`${out}\n`);
  }
  if (out !== undefined && f.open === true) {
    const opener = openerFor(out, process.platform, process.env);
    if (!opener) ctx.log('no display to open it on: open the file above in a browser');
    else if (!(await startOpener(opener)))
      ctx.log(`could not run ${opener.command}: open the file above in a browser`);
  }
  const first = result.failures[0];
  return first === undefined ? EXIT.ok : describeFailure(first).code;
};
