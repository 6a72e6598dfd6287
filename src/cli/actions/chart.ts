import { fetchChart, prepareChart } from '../../commands/chart.js';
import { type ChartFlags, CLI_CHARTS, type CliChart } from '../../commands/chart-flags.js';
import { chartHints } from '../../commands/chart-hints.js';
import { UsageError } from '../../commands/errors.js';
import { renderChart } from '../../render/chart-output.js';
import { json } from '../../render/output.js';
import { chartFlagsOf, readControlsFile, text } from '../chart-values.js';
import { type Action, withConnection } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { systemTimeZone } from '../system-zone.js';

/** `cas chart <chart>`: the terminal side (argv values, stdin, the system zone, the clock). */

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

async function readControls(path: string | undefined): Promise<ChartFlags['controls']> {
  if (path === undefined) return undefined;
  if (path === '-') return { source: '- (stdin)', text: await readStdin() };
  return readControlsFile(path);
}

function chartName(value: string | undefined): CliChart {
  const chart = CLI_CHARTS.find((c) => c === value);
  // Commander checks the choices first; this guards a program.ts that drifted from CLI_CHARTS.
  if (!chart) throw new UsageError(`unknown chart "${value}"`, `one of ${CLI_CHARTS.join(', ')}`);
  return chart;
}

export const chart: Action = async (ctx, args) => {
  const f = ctx.flags;
  const flags = chartFlagsOf(f, await readControls(text(f.controls)));
  const env = { now: new Date(), defaultTz: systemTimeZone() };
  // Flags are checked before connecting: a typo must not first start the embedded service.
  const built = prepareChart({ chart: chartName(args[0]), flags, env });
  if (f.printControls === true) {
    ctx.out(json(built.controls));
    return EXIT.ok;
  }
  const csv = { guard: f.csvGuard !== false, terminal: ctx.isTty };
  // Loaded only for this format: the page builder inlines a megabyte of chart library.
  const html = f.format === 'html' ? await import('./chart-html.js') : undefined;
  await withConnection(ctx, async (c) => {
    const result = await fetchChart(built, c);
    if (html) {
      ctx.out(html.chartPage(result, flags, { now: env.now, source: html.sourceOf(ctx, c) }));
      return;
    }
    ctx.out(renderChart(result, ctx.format, { color: ctx.color, verbose: ctx.config.verbose, csv }));
    // An empty chart says why on stderr (a range without data, a misspelled name); exit code unchanged.
    for (const line of await chartHints(result, c)) ctx.log(line);
  });
  return EXIT.ok;
};
