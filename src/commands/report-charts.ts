import type { ChartFlags } from './chart-flags.js';

/**
 * What `cas report` draws. Every chart is planned as the argument list of the `cas chart` command
 * that gives the same chart, parsed by that command's own flag parser: so the page can show the
 * command under each chart, and its JSON is by construction what `cas chart ... --format json` prints.
 */

export interface ReportPlan {
  title: string;
  /** The words after `cas chart`. */
  argv: string[];
}

/** The report's own range and filter flags, as `cas chart` words. */
export interface SharedFlags {
  range: Pick<ChartFlags, 'from' | 'to' | 'last' | 'period' | 'tz'>;
  userWhere: readonly string[];
  cohort?: string | undefined;
  /** `--performed`, `--intent` and the `--where` after them, in command-line order. */
  sequence: ReadonlyArray<{ flag: string; value: string }>;
}

const TURN = 'Conversation Turn';
const STARTED = 'Conversation Started';
const ENDED = 'Conversation Ended';
const USAGE = 'Conversation Usage';

/** The default page: what the service can chart about conversations, in reading order. */
export function defaultPlans(trait: string): ReportPlan[] {
  return [
    { title: 'Turns and conversations', argv: ['segmentation', '--event', TURN, '--event', STARTED] },
    { title: 'Sessions', argv: ['sessions'] },
    { title: 'Retention', argv: ['retention', '--start-event', TURN, '--return-event', TURN] },
    { title: `Users by ${trait}`, argv: ['users', '--trait', trait] },
    { title: 'Funnel', argv: ['funnel', '--event', STARTED, '--event', TURN, '--event', ENDED] },
    { title: 'Intents', argv: ['intents'] },
    { title: 'Sentiment', argv: ['sentiment'] },
    { title: 'Intent conversion', argv: ['conversations', '--analyse', 'intentConversion'] },
    // decisions §5: a conversation's cost is its turns' and its usage events', where the presets put
    // each call that only asked for tools (turns alone showed about half of a log's spend).
    {
      title: 'Cost: turns, and calls recorded as usage',
      argv: [
        'segmentation',
        '--event',
        TURN,
        '--measure',
        'sum:cost',
        '--event',
        USAGE,
        '--measure',
        'sum:cost',
      ],
    },
  ];
}

/** The trait the user-composition chart slices by when `--trait` is not given: a common one. */
export function pickTrait(names: readonly string[]): string | undefined {
  return names.find((n) => n === 'plan') ?? names[0];
}

function has(argv: readonly string[], ...flags: string[]): boolean {
  return argv.some((word) => flags.includes(word));
}

/**
 * A chart's own words with the report's flags added: range flags the chart does not set itself go
 * first, filters after (they combine with the chart's own; a cohort is one, so the chart's wins).
 */
export function withShared(argv: readonly string[], shared: SharedFlags): string[] {
  // A spec ending in a flag stays so: `--chart "segmentation --event"` took the report's `--from` for
  // the event and said "too many arguments" (found by probing), where cas chart says the value is missing.
  const dangling = argv.length > 1 && argv.at(-1)?.startsWith('-') === true;
  const out = dangling ? argv.slice(0, -1) : [...argv];
  const { from, to, last, period, tz } = shared.range;
  if (!has(argv, '--from', '--to', '--last')) {
    if (from !== undefined) out.push('--from', from);
    if (to !== undefined) out.push('--to', to);
    if (last !== undefined) out.push('--last', last);
  }
  if (period !== undefined && !has(argv, '--period')) out.push('--period', period);
  if (tz !== undefined && !has(argv, '--tz')) out.push('--tz', tz);
  for (const w of shared.userWhere) out.push('--user-where', w);
  if (shared.cohort !== undefined && !has(argv, '--cohort')) out.push('--cohort', shared.cohort);
  for (const s of shared.sequence) out.push(`--${s.flag}`, s.value);
  if (dangling) out.push(argv.at(-1) as string);
  return out;
}

/** The filters as a person typed them, for the page's header. */
export function describeFilters(shared: SharedFlags): string {
  const words = withShared([], { ...shared, range: {} });
  return words.length === 0 ? 'none' : shellLine(words);
}

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

export function shellLine(words: readonly string[]): string {
  return words.map(shellWord).join(' ');
}

/** `cas chart` words from parsed flags, for `cas chart --format html`'s page. */
export function chartArgv(chart: string, flags: ChartFlags): string[] {
  const out = [chart];
  const add = (flag: string, value: string | undefined) => {
    if (value !== undefined) out.push(flag, value);
  };
  add('--from', flags.from);
  add('--to', flags.to);
  add('--last', flags.last);
  add('--period', flags.period);
  add('--tz', flags.tz);
  for (const s of flags.sequence ?? []) out.push(`--${s.flag}`, s.value);
  add('--group-by', flags.groupBy);
  add('--trait', flags.trait);
  for (const w of flags.userWhere ?? []) out.push('--user-where', w);
  add('--cohort', flags.cohort);
  add('--window', flags.window);
  add('--analyse', flags.analyse);
  add('--controls', flags.controls?.source);
  return out;
}
