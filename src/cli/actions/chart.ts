import { readFileSync } from 'node:fs';
import { fetchChart, prepareChart } from '../../commands/chart.js';
import { type ChartFlags, CLI_CHARTS, type CliChart, type OrderedFlag } from '../../commands/chart-flags.js';
import { chartHints } from '../../commands/chart-hints.js';
import { UsageError } from '../../commands/errors.js';
import { renderChart } from '../../render/chart-output.js';
import { json } from '../../render/output.js';
import { type Action, withConnection } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** `cas chart <chart>`: the terminal side (argv values, stdin, the system zone, the clock). */

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function texts(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

function orderedFlags(value: unknown): OrderedFlag[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (item === null || typeof item !== 'object') return [];
    const { flag, value: v } = item as Record<string, unknown>;
    return typeof flag === 'string' && typeof v === 'string' ? [{ flag, value: v }] : [];
  });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

async function readControls(path: string | undefined): Promise<ChartFlags['controls']> {
  if (path === undefined) return undefined;
  if (path === '-') return { source: '- (stdin)', text: await readStdin() };
  try {
    return { source: path, text: readFileSync(path, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(
      `--controls ${path}: cannot read the file (${code})`,
      'give a JSON file, or - for stdin',
    );
  }
}

function chartName(value: string | undefined): CliChart {
  const chart = CLI_CHARTS.find((c) => c === value);
  // Commander checks the choices first; this guards a program.ts that drifted from CLI_CHARTS.
  if (!chart) throw new UsageError(`unknown chart "${value}"`, `one of ${CLI_CHARTS.join(', ')}`);
  return chart;
}

export const chart: Action = async (ctx, args) => {
  const f = ctx.flags;
  const flags: ChartFlags = {
    from: text(f.from),
    to: text(f.to),
    last: text(f.last),
    period: text(f.period),
    tz: text(f.tz),
    sequence: orderedFlags(f.sequence),
    groupBy: text(f.groupBy),
    trait: text(f.trait),
    userWhere: texts(f.userWhere),
    cohort: text(f.cohort),
    window: text(f.window),
    analyse: text(f.analyse),
    controls: await readControls(text(f.controls)),
  };
  const env = { now: new Date(), defaultTz: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' };
  // Flags are checked before connecting: a typo must not first start the embedded service.
  const built = prepareChart({ chart: chartName(args[0]), flags, env });
  if (f.printControls === true) {
    ctx.out(json(built.controls));
    return EXIT.ok;
  }
  const csv = { guard: f.csvGuard !== false, terminal: ctx.isTty };
  await withConnection(ctx, async (c) => {
    const result = await fetchChart(built, c);
    ctx.out(renderChart(result, ctx.format, { color: ctx.color, verbose: ctx.config.verbose, csv }));
    // An empty chart says why on stderr (a range without data, a misspelled name); exit code unchanged.
    for (const line of await chartHints(result, c)) ctx.log(line);
  });
  return EXIT.ok;
};
