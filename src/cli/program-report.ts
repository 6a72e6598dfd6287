import type { Command } from 'commander';
import { addFilterOptions, addRangeOptions, collect, type Sequence } from './chart-options.js';
import type { ActionRunner } from './program.js';

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

/** `cas report`: the charts as one self-contained HTML page (the action: actions/report.ts). */
export function addReportCommand(program: Command, run: ActionRunner): void {
  const sequence: Sequence = [];
  const command = program
    .command('report')
    .description('write the charts as one self-contained HTML page (offline; light, dark and print)')
    .option('--out <file>', 'the HTML file to write (- for stdout)', 'report.html')
    .option('--open', "open it with the system's opener when there is a display (else print its path)");
  addRangeOptions(command);
  addFilterOptions(command, sequence, 'the --performed or --intent before it')
    .option(
      '--trait <name>',
      'the trait the users chart slices by (default: plan, else the first trait found)',
    )
    .option(
      '--chart <spec>',
      'a chart as `cas chart` words, e.g. "funnel --event A --event B" (repeatable; replaces the default charts)',
      collect,
    )
    .addHelpText(
      'after',
      examples([
        'cas report --from 2025-01-06 --to 2025-02-02 --period week --tz UTC --out report.html',
        'cas report --last 12w --period week --user-where "plan = pro" --out pro.html',
        'cas report --from 2025-01-06 --to 2025-02-02 --chart "segmentation --event \'Conversation Turn\' --group-by model" --chart "users --trait country" --out models.html',
      ]) +
        '\nDefault charts: turns and conversations, sessions, retention (heat map), users by a trait, funnel,\n' +
        'intents, sentiment, intent conversion and cost. Range and filter flags apply to every chart; under\n' +
        'each chart the page shows the cas chart command that gives the same data, its table and a CSV\n' +
        'download. The page inlines its chart library (Apache ECharts) and makes no network requests.\n',
    )
    .action((_options: Record<string, unknown>, c: Command) =>
      run('report', { ...c.optsWithGlobals(), sequence: [...sequence] }, []),
    );
}
