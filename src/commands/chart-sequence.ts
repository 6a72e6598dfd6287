import type { EventFilterInput, IntentFilterInput, PropertyFilterInput } from '../shared/chart-filters.js';
import { type Measure, parseMeasureText } from '../shared/chart-measure.js';
import { CLI_CHARTS, type CliChart } from '../shared/cli-charts.js';
import { parsePerformed, parseWhere } from './chart-expr.js';
import { UsageError } from './errors.js';

/**
 * The order-sensitive chart flags. `--where` filters the event-like flag just before it, so these
 * flags arrive as one list in command-line order (program.ts collects them) and are walked here.
 * `--where` after `--start-event`, `--return-event`, `--performed` or `--intent` filters that one,
 * which is what a person reading the command left to right expects.
 */

export { CLI_CHARTS, type CliChart } from '../shared/cli-charts.js';

export interface OrderedFlag {
  /** The flag without dashes: event, where, measure, start-event, return-event, performed, intent. */
  flag: string;
  value: string;
}

const ALL: readonly CliChart[] = CLI_CHARTS;
const APPLIES: Readonly<Record<string, readonly CliChart[]>> = {
  event: ['segmentation', 'sessions', 'funnel'],
  measure: ['segmentation'],
  'start-event': ['retention'],
  'return-event': ['retention'],
  performed: ALL,
  intent: ALL,
  where: ALL,
};

/** What each chart takes instead, for the "does not apply" hint. */
export const CHART_HINTS: Readonly<Record<CliChart, string>> = {
  segmentation: 'segmentation takes --event (repeatable) with --where, and --group-by <prop>',
  retention:
    'retention takes --start-event and --return-event (each may be followed by --where), and --trait',
  sessions: 'sessions takes --event to keep sessions containing it, and --trait to group by a user trait',
  users: 'the users chart takes --trait <name> (the slices) and --group-by <trait>',
  funnel:
    'funnel takes --event per step, in order (each may be followed by --where), --window 1d, and --trait',
  intents: 'the intents chart takes the user filters and --trait to group by a user trait',
  sentiment:
    'sentiment takes one --intent <name> (default "Any Intent"; --where filters its attributes) and --trait',
  conversations: 'conversations takes --analyse <what> and --trait to group by a user trait',
};

export function notFor(flag: string, chart: CliChart): UsageError {
  return new UsageError(`${flag} does not apply to the ${chart} chart`, CHART_HINTS[chart]);
}

export interface SequenceResult {
  events: EventFilterInput[];
  startingEvent?: EventFilterInput;
  returnEvents: EventFilterInput[];
  performed: EventFilterInput[];
  intents: IntentFilterInput[];
  /** The sentiment chart's one `--intent`. */
  intentFilter?: IntentFilterInput;
  /** chartControls path → the flag occurrence that produced it, for error messages. */
  origins: Map<string, string>;
}

interface Target {
  path: string;
  filter: { with?: PropertyFilterInput[] | undefined; measure?: Measure | undefined };
}

export function walkSequence(chart: CliChart, sequence: readonly OrderedFlag[]): SequenceResult {
  const result: SequenceResult = {
    events: [],
    returnEvents: [],
    performed: [],
    intents: [],
    origins: new Map(),
  };
  let target: Target | undefined;
  const add = <T extends Target['filter']>(list: T[], filter: T, path: string, label: string): Target => {
    list.push(filter);
    result.origins.set(path, label);
    return { path, filter };
  };
  for (const { flag, value } of sequence) {
    const allowed = APPLIES[flag];
    // program.ts decides which flags land here; anything else is a wiring bug, not a user error.
    if (!allowed) throw new Error(`unexpected ordered chart flag --${flag}`);
    if (!allowed.includes(chart)) throw notFor(`--${flag}`, chart);
    const label = `--${flag} "${value}"`;
    switch (flag) {
      case 'where': {
        if (!target) {
          throw new UsageError(
            `${label}: --where filters the --event before it, and none came before`,
            'e.g. --event "Conversation Turn" --where "model = gpt-4o"',
          );
        }
        const list = target.filter.with ?? [];
        target.filter.with = list;
        result.origins.set(`${target.path}.with[${list.length}]`, label);
        list.push(parseWhere(value));
        break;
      }
      case 'event':
        target = add(result.events, { event_name: value }, `eventFilters[${result.events.length}]`, label);
        break;
      case 'measure': {
        if (!target?.path.startsWith('eventFilters[')) {
          throw new UsageError(
            `${label}: --measure measures the --event before it, and none came before`,
            'e.g. --event "Conversation Turn" --measure p95:completion_tokens',
          );
        }
        if (target.filter.measure !== undefined)
          throw new UsageError(`${label}: this --event already has a --measure`);
        const measure = parseMeasureText(value);
        if (typeof measure === 'string') {
          throw new UsageError(`${label}: ${measure}`, 'e.g. --measure sum:cost or --measure p95:runtime');
        }
        target.filter.measure = measure;
        result.origins.set(`${target.path}.measure`, label);
        break;
      }
      case 'start-event': {
        if (result.startingEvent) {
          throw new UsageError(
            `${label}: --start-event given more than once`,
            'add more with --return-event',
          );
        }
        const filter: EventFilterInput = { event_name: value };
        result.startingEvent = filter;
        result.origins.set('startingEvent', label);
        target = { path: 'startingEvent', filter };
        break;
      }
      case 'return-event':
        target = add(
          result.returnEvents,
          { event_name: value },
          `returnEvents[${result.returnEvents.length}]`,
          label,
        );
        break;
      case 'performed':
        target = add(
          result.performed,
          parsePerformed(value),
          `userFilters[0].performed_events[${result.performed.length}]`,
          label,
        );
        break;
      case 'intent': {
        if (chart !== 'sentiment') {
          target = add(result.intents, { intent: value }, `shownIntents[${result.intents.length}]`, label);
          break;
        }
        // The sentiment chart's --intent is the intent whose conversations it splits (intentFilter).
        if (result.intentFilter) throw new UsageError(`${label}: the sentiment chart takes one --intent`);
        const filter: IntentFilterInput = { intent: value };
        result.intentFilter = filter;
        result.origins.set('intentFilter', label);
        target = { path: 'intentFilter', filter };
        break;
      }
    }
  }
  return result;
}
