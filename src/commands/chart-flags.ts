import { CONVERSATION_ANALYSES } from '../shared/analysis-controls.js';
import { type ChartControlsByKind, type ChartKind, parseChartControls } from '../shared/chart-controls.js';
import type { GroupByProperty, TraitGroup } from '../shared/chart-filters.js';
import { parseJsonText } from '../shared/json-syntax.js';
import { isTimeZone } from '../shared/primitives.js';
import { parseNameValues, parseWhere } from './chart-expr.js';
import {
  type ChartEnv,
  checkPeriod,
  checkTimeZone,
  hasRangeBounds,
  type RangeFlags,
  rangeBounds,
  rangeFlagLabel,
} from './chart-range.js';
import { type CliChart, notFor, type OrderedFlag, walkSequence } from './chart-sequence.js';
import { UsageError } from './errors.js';

export type { ChartEnv } from './chart-range.js';
export { CLI_CHARTS, type CliChart, type OrderedFlag } from './chart-sequence.js';

/**
 * `cas chart <chart>` flags → chartControls (cli.md "cas chart"). The result is validated with the
 * shared schemas before anything is sent, and every problem is reported against the flag a person
 * typed (tracked per chartControls path in `origins`), not against a JSON path they never wrote.
 */

/** The CLI's chart names (cli.md) and the service's route kinds. */
export const CHART_KIND: Readonly<Record<CliChart, ChartKind>> = {
  segmentation: 'segmentation',
  retention: 'retention',
  sessions: 'session',
  users: 'user-composition',
  funnel: 'funnel',
  intents: 'intent-distribution',
  sentiment: 'sentiment-analysis',
  conversations: 'conversation-analysis',
};

export interface ChartFlags extends RangeFlags {
  /** `--event`, `--where`, `--start-event`, `--return-event`, `--performed`, `--intent` in command-line order. */
  sequence?: readonly OrderedFlag[] | undefined;
  groupBy?: string | undefined;
  trait?: string | undefined;
  userWhere?: readonly string[] | undefined;
  cohort?: string | undefined;
  /** funnel: `--window 12h|1d|2w`, how long after step 1 the later steps may come. */
  window?: string | undefined;
  /** conversations: `--analyse <what>` (default intentConversion). */
  analyse?: string | undefined;
  /** `--controls <file|->`, already read: flags override its fields. */
  controls?: { source: string; text: string } | undefined;
}

export type AnyChartControls = ChartControlsByKind[ChartKind];

export interface BuiltControls {
  chart: CliChart;
  kind: ChartKind;
  /** Exactly what is sent (and what --print-controls prints): defaults are left to the service. */
  controls: Record<string, unknown>;
  /** The same after validation, defaults applied. */
  parsed: AnyChartControls;
  /** The flag behind each part of `controls` (by path prefix), for refusals: see `originOf`. */
  origins: ReadonlyMap<string, string>;
}

const REQUIRED: Partial<Record<CliChart, { key: string; message: string; hint: string }>> = {
  segmentation: {
    key: 'eventFilters',
    message: 'segmentation needs at least one --event <name>',
    hint: 'e.g. cas chart segmentation --event "Conversation Turn" --last 7d',
  },
  retention: {
    key: 'startingEvent',
    message: 'retention needs --start-event <name>',
    hint: 'e.g. cas chart retention --start-event "Session Started" --period week',
  },
  users: {
    key: 'selectedTrait',
    message: 'the users chart needs --trait <name>',
    hint: 'e.g. cas chart users --trait plan',
  },
  funnel: {
    key: 'eventFilters',
    message: 'funnel needs its steps: --event <name>, in order, at least one',
    hint: 'e.g. cas chart funnel --event "Conversation Started" --event "Conversation Turn" --window 1d',
  },
};

const FLAG_HINTS: Readonly<Record<string, string>> = {
  '--where': 'e.g. --where "plan = pro" or --where "age between 18,65"',
  '--user-where': 'e.g. --user-where "plan in pro,team"',
  '--event': 'e.g. --event "Conversation Turn"',
  '--performed': 'e.g. --performed "Purchase >= 3"',
  '--tz': 'e.g. --tz Europe/Paris',
  '--window': 'e.g. --window 12h, --window 1d, --window 2w',
  '--analyse': `one of ${CONVERSATION_ANALYSES.join(', ')}`,
  '--from': 'e.g. --from 2025-03-01 --to 2025-03-31, or --last 30d (at most 1,000 bins)',
  '--to': 'e.g. --from 2025-03-01 --to 2025-03-31 (the --to day is included)',
  '--last': 'e.g. --last 30d, --last 12w, --last 6m (at most 1,000 bins)',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function readControlsFile(controls: NonNullable<ChartFlags['controls']>): Record<string, unknown> {
  const label = `--controls ${controls.source}`;
  const value = parseJsonText(
    controls.text,
    (why) =>
      new UsageError(
        `${label}: not valid JSON (${why})`,
        'give a chartControls object, e.g. from --print-controls',
      ),
  );
  if (!isRecord(value)) throw new UsageError(`${label}: expected a chartControls JSON object`);
  return value;
}

/** `range`: flags win field by field over the --controls file, which wins over the defaults. */
function buildRange(flags: ChartFlags, env: ChartEnv, base: unknown, origins: Map<string, string>): unknown {
  const baseRange = isRecord(base) ? base : undefined;
  const bounds = hasRangeBounds(flags);
  if (baseRange && !bounds && flags.period === undefined && flags.tz === undefined) return base;
  const baseTz = typeof baseRange?.tz === 'string' && isTimeZone(baseRange.tz) ? baseRange.tz : undefined;
  const tz = flags.tz !== undefined ? checkTimeZone(flags.tz) : (baseTz ?? env.defaultTz);
  const range: Record<string, unknown> = { ...baseRange };
  if (bounds || !baseRange) {
    Object.assign(range, rangeBounds(flags, env, tz, baseRange));
    origins.set('range', rangeFlagLabel(flags));
  }
  if (flags.period !== undefined) {
    range.period = checkPeriod(flags.period);
    origins.set('range.period', `--period ${flags.period}`);
  } else if (!baseRange) {
    range.period = 'day';
  }
  if (flags.tz !== undefined) origins.set('range.tz', `--tz ${flags.tz}`);
  if (flags.tz !== undefined || !baseRange) range.tz = tz;
  return range;
}

const WINDOW_UNITS = { h: 'hour', d: 'day', w: 'week' } as const;

/** `--window 12h` → conversionWindow; the schema checks the bounds and names the flag. */
function conversionWindow(text: string): unknown {
  const m = /^(\d+)([hdw])$/.exec(text.trim());
  if (!m) throw new UsageError(`--window ${text}: expected a number and h, d or w`, FLAG_HINTS['--window']);
  return { number: Number(m[1]), unit: WINDOW_UNITS[m[2] as keyof typeof WINDOW_UNITS] };
}

/** Fields only some charts have: the funnel's window, the sentiment intent, the analysis. */
function chartFields(
  chart: CliChart,
  flags: ChartFlags,
  base: Record<string, unknown>,
  intentFilter: unknown,
  origins: Map<string, string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (flags.window !== undefined) {
    if (chart !== 'funnel') throw notFor('--window', chart);
    out.conversionWindow = conversionWindow(flags.window);
    origins.set('conversionWindow', `--window ${flags.window}`);
  }
  if (flags.analyse !== undefined) {
    if (chart !== 'conversations') throw notFor('--analyse', chart);
    out.analyse = flags.analyse;
    origins.set('analyse', `--analyse ${flags.analyse}`);
  } else if (chart === 'conversations' && base.analyse === undefined) {
    out.analyse = 'intentConversion';
  }
  if (intentFilter !== undefined) out.intentFilter = intentFilter;
  else if (chart === 'sentiment' && base.intentFilter === undefined)
    out.intentFilter = { intent: 'Any Intent' };
  return out;
}

function traitGroup(text: string, flag: string): TraitGroup {
  const { name, values } = parseNameValues(text, flag);
  return values ? { trait_name: name, trait_values: values } : { trait_name: name };
}

/** The chart-specific group-by fields: segmentation groups each series, the others by a trait. */
function groupings(
  chart: CliChart,
  flags: ChartFlags,
  origins: Map<string, string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const { trait, groupBy } = flags;
  if (chart === 'segmentation') {
    if (trait !== undefined) throw notFor('--trait', chart);
    return out;
  }
  if (chart === 'users') {
    if (trait !== undefined) {
      out.selectedTrait = traitGroup(trait, '--trait');
      origins.set('selectedTrait', `--trait ${trait}`);
    }
    if (groupBy !== undefined) {
      out.groupBy = traitGroup(groupBy, '--group-by');
      origins.set('groupBy', `--group-by ${groupBy}`);
    }
    return out;
  }
  // Retention and sessions group by a user trait; --group-by is accepted as the same thing.
  if (trait !== undefined && groupBy !== undefined) {
    throw new UsageError(
      '--trait and --group-by both group this chart by a trait; give one',
      'e.g. --trait plan',
    );
  }
  const text = trait ?? groupBy;
  if (text !== undefined) {
    const flag = trait !== undefined ? '--trait' : '--group-by';
    out.groupBy = traitGroup(text, flag);
    origins.set('groupBy', `${flag} ${text}`);
  }
  return out;
}

function seriesGroupBy(flags: ChartFlags): GroupByProperty | undefined {
  if (flags.groupBy === undefined) return undefined;
  const { name, values } = parseNameValues(flags.groupBy, '--group-by');
  return { property_name: name, property_values: values ?? [] };
}

/**
 * The flag occurrence (with its value) that produced the longest matching prefix of a chartControls
 * path; undefined for parts a --controls file gave.
 */
export function originOf(path: string, origins: ReadonlyMap<string, string>): string | undefined {
  let best: string | undefined;
  let bestLength = -1;
  for (const [prefix, label] of origins) {
    const next = path.charAt(prefix.length);
    const matches = path.startsWith(prefix) && (next === '' || next === '.' || next === '[');
    if (matches && prefix.length > bestLength) {
      best = label;
      bestLength = prefix.length;
    }
  }
  return best;
}

export function buildChartControls(chart: CliChart, flags: ChartFlags, env: ChartEnv): BuiltControls {
  const kind = CHART_KIND[chart];
  const base = flags.controls ? readControlsFile(flags.controls) : {};
  const seq = walkSequence(chart, flags.sequence ?? []);
  const origins = seq.origins;
  const out: Record<string, unknown> = { ...base, range: buildRange(flags, env, base.range, origins) };

  const groupBy = chart === 'segmentation' ? seriesGroupBy(flags) : undefined;
  if (seq.events.length > 0) out.eventFilters = seq.events;
  // Applied to the --controls file's series too; without any series the "needs --event" error below is clearer.
  if (groupBy && Array.isArray(out.eventFilters)) {
    out.eventFilters = out.eventFilters.map((filter: unknown, i) => {
      origins.set(`eventFilters[${i}].groupBy`, `--group-by ${flags.groupBy}`);
      return isRecord(filter) ? { ...filter, groupBy } : filter;
    });
  }
  if (seq.startingEvent) out.startingEvent = seq.startingEvent;
  if (seq.returnEvents.length > 0) out.returnEvents = seq.returnEvents;

  const userWhere = (flags.userWhere ?? []).map((text, i) => {
    origins.set(`userFilters[0].with[${i}]`, `--user-where "${text}"`);
    return parseWhere(text, '--user-where');
  });
  if (flags.cohort !== undefined) origins.set('userFilters[0].cohort', `--cohort "${flags.cohort}"`);
  if (flags.cohort !== undefined || userWhere.length > 0 || seq.performed.length > 0) {
    out.userFilters = [
      {
        ...(flags.cohort !== undefined ? { cohort: flags.cohort } : {}),
        ...(userWhere.length > 0 ? { with: userWhere } : {}),
        ...(seq.performed.length > 0 ? { performed_events: seq.performed } : {}),
      },
    ];
  }
  if (seq.intents.length > 0) out.shownIntents = seq.intents;
  Object.assign(out, groupings(chart, flags, origins));
  Object.assign(out, chartFields(chart, flags, base, seq.intentFilter, origins));

  const required = REQUIRED[chart];
  if (required && out[required.key] === undefined) throw new UsageError(required.message, required.hint);
  return validate(chart, kind, out, origins, flags.controls?.source);
}

function validate(
  chart: CliChart,
  kind: ChartKind,
  controls: Record<string, unknown>,
  origins: Map<string, string>,
  controlsSource: string | undefined,
): BuiltControls {
  const parsed = parseChartControls(kind, controls);
  if (parsed.ok) return { chart, kind, controls, parsed: parsed.value, origins };
  const { issues } = parsed;
  const first = issues[0] ?? { path: 'chartControls', message: 'invalid' };
  const fallback = controlsSource !== undefined ? `--controls ${controlsSource}` : 'chartControls';
  const label = originOf(first.path, origins) ?? fallback;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  const flag = /^--[a-z-]+/.exec(label)?.[0] ?? '';
  throw new UsageError(`${label}: ${first.message} (at ${first.path})${more}`, FLAG_HINTS[flag]);
}
