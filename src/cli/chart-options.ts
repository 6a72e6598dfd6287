import { type Command, InvalidArgumentError } from 'commander';
import type { OrderedFlag } from '../commands/chart-sequence.js';
import { CLI_CHARTS } from '../shared/cli-charts.js';

/**
 * The flags that say which chart to draw, shared by `cas chart`, each `cas report --chart <spec>`
 * and the report's default charts (parsed here too, so a flag means one thing everywhere).
 * `--where` filters the event-like flag just before it, so those flags are collected into one list
 * in command-line order; the action turns it into chartControls (commands/chart-flags.ts).
 */

/** The order-sensitive flags in command-line order (commands/chart-sequence.ts walks them). */
export type Sequence = OrderedFlag[];

/** The chart names `cas chart` and `--chart` accept: the commands' own list. */
export const CHART_NAMES = CLI_CHARTS;

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function once(flag: string) {
  return (value: string, previous: unknown) => {
    if (previous !== undefined) throw new InvalidArgumentError(`${flag} given more than once`);
    return value;
  };
}

/** `--from --to --last --period --tz`: the range of every chart. */
export function addRangeOptions(command: Command): Command {
  return command
    .option(
      '--from <when>',
      'range start: YYYY-MM-DD (that day in --tz) or an ISO 8601 time (without an offset: in --tz)',
    )
    .option(
      '--to <when>',
      'range end: a YYYY-MM-DD day is included; an ISO time is exclusive (default: today)',
    )
    .option(
      '--last <span>',
      'the last n days/ISO weeks/months up to --to or today: 30d, 12w, 6m (default: 30d)',
    )
    .option('--period <unit>', 'bin size: day, week or month (default: day)')
    .option('--tz <zone>', 'IANA time zone of the bins (default: the system zone, else UTC)');
}

/** The user filters: which users' data the charts count. */
export function addFilterOptions(
  command: Command,
  sequence: Sequence,
  whereFilters = 'the --event (or other event flag) before it',
): Command {
  const inOrder = (flag: string) => (value: string) => {
    sequence.push({ flag, value });
    return sequence;
  };
  return command
    .option(
      '--user-where <expr>',
      '"<trait> <op> <value>": only users whose trait matches (repeatable)',
      collect,
    )
    .option('--cohort <name>', 'only users of this cohort ("All Users")', once('--cohort'))
    .option(
      '--performed <expr>',
      '"<event> [op n]": only users who did it ("Purchase >= 3"; repeatable)',
      inOrder('performed'),
    )
    .option(
      '--intent <name>',
      'only users who showed this intent in the range (repeatable; "Any Intent"); sentiment: the intent whose conversations it splits',
      inOrder('intent'),
    )
    .option('--where <expr>', `"<prop> <op> <value>": filters ${whereFilters}`, inOrder('where'));
}

/** Everything `cas chart` takes to build chartControls (output flags aside). */
export function addChartOptions(command: Command, sequence: Sequence): Command {
  const inOrder = (flag: string) => (value: string) => {
    sequence.push({ flag, value });
    return sequence;
  };
  addRangeOptions(command)
    .option(
      '--event <name>',
      'segmentation series / sessions containing it / funnel step, in order (repeatable)',
      inOrder('event'),
    )
    .option(
      '--measure <agg:prop>',
      'segmentation: what the --event before it measures: count, or sum/avg/min/max/p50/p90/p95/p99 of a numeric property (sum:cost, p95:runtime); our extension, refused by a service without it (the hosted one)',
      inOrder('measure'),
    )
    .option(
      '--window <span>',
      "funnel: how long after a person's first step 1 in the range the later steps may come, the end excluded as a range's is (a step exactly 1h later is outside --window 1h; first-touch: a later step 1 does not restart it): 12h, 1d, 2w (default: the range); our extension, refused by a service without it",
    )
    .option(
      '--analyse <what>',
      'conversations: intentConversion (default), firstIntentFriction, newIntents, sentiment, duration, prompts',
    )
    .option(
      '--group-by <prop>',
      'segmentation: group each series by a property (prop or prop=v1,v2); others: by a user trait',
      once('--group-by'),
    )
    .option(
      '--start-event <name>',
      'retention: the event that puts a user in a cohort',
      inOrder('start-event'),
    )
    .option(
      '--return-event <name>',
      'retention: an event that counts as returning (repeatable)',
      inOrder('return-event'),
    )
    .option(
      '--trait <name>',
      'users: the trait to slice by; retention/sessions: group by it (name=v1,v2 lists values)',
      once('--trait'),
    );
  addFilterOptions(command, sequence);
  return command.option(
    '--controls <file>',
    'chartControls JSON file (- for stdin) sent as is; flags override its fields',
  );
}
