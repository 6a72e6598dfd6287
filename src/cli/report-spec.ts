import { Argument, Command, CommanderError } from 'commander';
import type { ChartFlags, CliChart } from '../commands/chart-flags.js';
import { CLI_CHARTS } from '../commands/chart-flags.js';
import { UsageError } from '../commands/errors.js';
import { addChartOptions, CHART_NAMES, type Sequence } from './chart-options.js';
import { chartFlagsOf, readControlsFile, text } from './chart-values.js';

/**
 * `cas report --chart "<cas chart words>"` and the report's planned charts: words → ChartFlags with
 * the very options `cas chart` has, so a spec means what the same `cas chart` command means.
 */

/** Splits a spec as a POSIX shell would: blanks separate words, quotes and backslashes keep them. */
export function splitWords(spec: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < spec.length; i++) {
    const ch = spec.charAt(i);
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && /["\\$`]/.test(spec.charAt(i + 1))) word += spec.charAt(++i);
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < spec.length) {
      word += spec.charAt(++i);
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new UsageError(`--chart "${spec}": unterminated ${quote} quote`);
  if (inWord) words.push(word);
  return words;
}

export interface ParsedChart {
  chart: CliChart;
  flags: ChartFlags;
}

/** `cas chart` words → the chart and its flags; a problem is a UsageError that names `label`. */
export function parseChartWords(words: readonly string[], label: string): ParsedChart {
  const sequence: Sequence = [];
  let message = '';
  const command = new Command('chart')
    .exitOverride()
    .configureOutput({ writeErr: (m) => (message += m), writeOut: () => {} })
    .addArgument(new Argument('<chart>', CHART_NAMES.join(' | ')).choices(CHART_NAMES));
  addChartOptions(command, sequence);
  try {
    command.parse([...words], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // commander puts its "(Did you mean …?)" on a line of its own; an error is one line.
    const said = (message.trim().replace(/^error: /, '') || error.message).replace(/\s*\n\s*/g, ' ');
    throw new UsageError(
      `${label}: ${said}`,
      `e.g. --chart "funnel --event 'Conversation Started' --event Purchase"`,
    );
  }
  const chart = CLI_CHARTS.find((c) => c === command.args[0]);
  if (!chart) throw new UsageError(`${label}: unknown chart "${command.args[0]}"`);
  const values = command.opts();
  const controlsPath = text(values.controls);
  if (controlsPath === '-')
    throw new UsageError(`${label}: --controls - (stdin) is for cas chart; give a file`);
  const controls = controlsPath === undefined ? undefined : readControlsFile(controlsPath);
  return { chart, flags: chartFlagsOf({ ...values, sequence }, controls) };
}
