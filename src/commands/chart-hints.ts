import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { eventCounts, listEventNames, listProperties, listUserTraits } from '../client/routes.js';
import { eventStats, propertyStats } from '../client/stats-routes.js';
import { EVENT_NAMES } from '../shared/event-names.js';
import type { EventStat } from '../shared/event-stats.js';
import { formatInZone, resolveInstant } from '../shared/time-bins.js';
import { groupHints, optional } from './group-hints.js';
import {
  exactRegex,
  quoteList,
  unknownEventLine,
  unknownPropertyLine,
  unknownTraitLine,
} from './hint-lines.js';

/**
 * Why a chart came back empty (issue 18): a range where the project has no data, an event name that
 * does not exist, a property or trait nobody has. Looked up only when the chart (or a segmentation
 * series) is all zeros, so a chart with data costs nothing more, unless a group of it is `(none)`
(group-hints.ts). Lines for stderr; the chart and its
 * exit code stay as they are, and a lookup that fails (an older service, a timeout) says nothing.
 */

const ANY_EVENT = 'Any Event';

/** What a chart's controls name, found by walking them (so charts added later are covered too). */
export interface NamedInControls {
  /** Each event filter's name, with the properties its `with` and `groupBy` read. */
  events: Array<{ name: string; properties: string[] }>;
  /** User traits read by user filters and trait group-bys. */
  traits: string[];
  /**
   * What the chart's groups are made of: a misspelt name still draws a chart (every user or event in
   * one `(none)` group), so these are checked whatever the chart shows.
   */
  groupedBy: { properties: Array<{ event: string; property: string }>; traits: string[] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function propertyNames(filters: unknown): string[] {
  if (!Array.isArray(filters)) return [];
  return filters.flatMap((f) =>
    isRecord(f) && typeof f.property_name === 'string' ? [f.property_name] : [],
  );
}

export function namedInControls(controls: unknown): NamedInControls {
  const events = new Map<string, Set<string>>();
  const traits = new Set<string>();
  const groupedBy: NamedInControls['groupedBy'] = { properties: [], traits: [] };
  const visit = (node: unknown, inUserFilter: boolean): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, inUserFilter);
      return;
    }
    if (!isRecord(node)) return;
    if (typeof node.event_name === 'string') {
      const props = events.get(node.event_name) ?? new Set<string>();
      events.set(node.event_name, props);
      for (const p of propertyNames(node.with)) props.add(p);
      if (isRecord(node.groupBy) && typeof node.groupBy.property_name === 'string') {
        props.add(node.groupBy.property_name);
        groupedBy.properties.push({ event: node.event_name, property: node.groupBy.property_name });
      }
    } else if (inUserFilter) {
      for (const t of propertyNames(node.with)) traits.add(t);
    }
    if (typeof node.trait_name === 'string') traits.add(node.trait_name);
    for (const key of ['groupBy', 'selectedTrait']) {
      const group = node[key];
      if (isRecord(group) && typeof group.trait_name === 'string') groupedBy.traits.push(group.trait_name);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'with') continue;
      visit(value, inUserFilter || key === 'userFilters');
    }
  };
  visit(controls, false);
  return {
    events: [...events].map(([name, properties]) => ({ name, properties: [...properties] })),
    traits: [...traits],
    groupedBy,
  };
}

/** True when no number anywhere in `value` differs from 0 (an empty list included). */
export function allZero(value: unknown): boolean {
  if (typeof value === 'number') return value === 0 || !Number.isFinite(value);
  if (Array.isArray(value)) return value.every(allZero);
  if (isRecord(value)) return Object.values(value).every(allZero);
  return true;
}

export interface ChartRangeBounds {
  start: string;
  end: string;
  tz: string;
  period?: string | undefined;
}

const DAY_MS = 86_400_000;
const day = (ms: number, tz: string) => formatInZone(ms, tz).slice(0, 10);

/** The last day of the month of `date` (YYYY-MM-DD). */
function monthEnd(date: string): string {
  const [y, m] = date.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return `${date.slice(0, 8)}${String(last).padStart(2, '0')}`;
}

/**
 * "no events between A and B (tz); the data spans X .. Y: try --from … --to …", the suggestion
 * rounded out to whole months. `span` undefined: the service cannot say where the data lies.
 */
export function emptyRangeLine(
  range: ChartRangeBounds,
  span: { first: string; last: string } | undefined,
  what = 'events',
): string | undefined {
  const start = resolveInstant(range.start, range.tz);
  const end = resolveInstant(range.end, range.tz);
  if (!start || !end) return undefined;
  const head = `cas: no ${what} between ${day(start.getTime(), range.tz)} and ${day(end.getTime() - 1, range.tz)} (${range.tz})`;
  if (!span) return head;
  const first = day(Date.parse(span.first), range.tz);
  const last = day(Date.parse(span.last), range.tz);
  const from = `${first.slice(0, 8)}01`;
  const to = monthEnd(last);
  const days = Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1;
  // More than the chart's 1,000 bins by day: suggest a coarser period too.
  const period = days > 1000 ? (days > 7000 ? ' --period month' : ' --period week') : '';
  return `${head}; the data spans ${first} .. ${last}: try --from ${from} --to ${to}${period}`;
}

/** The time span of the given stats (all of them when `names` is empty or none of them is known). */
export function spanOf(
  stats: readonly EventStat[],
  names: readonly string[] = [],
): { first: string; last: string } | undefined {
  const wanted = stats.filter((s) => names.includes(s.event));
  const pool = wanted.length > 0 ? wanted : stats;
  if (pool.length === 0) return undefined;
  const first = pool.reduce((a, s) => (Date.parse(s.first) < Date.parse(a) ? s.first : a), pool[0]!.first);
  const last = pool.reduce((a, s) => (Date.parse(s.last) > Date.parse(a) ? s.last : a), pool[0]!.last);
  return { first, last };
}

function rangeOf(parsed: unknown): ChartRangeBounds | undefined {
  const range = isRecord(parsed) ? parsed.range : undefined;
  if (!isRecord(range)) return undefined;
  const { start, end, tz, period } = range;
  return typeof start === 'string' && typeof end === 'string' && typeof tz === 'string'
    ? { start, end, tz, period: typeof period === 'string' ? period : undefined }
    : undefined;
}

/** Which parts of a fetched chart show nothing: the whole chart, or segmentation series by index. */
export function emptyParts(kind: string, raw: unknown): { chart: boolean; series: number[] } {
  const chart = allZero(raw);
  if (kind !== 'segmentation' || !Array.isArray(raw)) return { chart, series: [] };
  return { chart, series: raw.flatMap((series, i) => (allZero(series) ? [i] : [])) };
}

/** Charts that count only conversations with intents (or users who showed one). */
const INTENT_KINDS = new Set(['intent-distribution', 'sentiment-analysis', 'intent-analysis']);
const INTENT_ANALYSES = new Set(['intentConversion', 'firstIntentFriction', 'newIntents']);

/** Whether the chart counts intents: its kind, its analysis, or an intent filter in its controls. */
export function readsIntents(kind: string, parsed: unknown): boolean {
  if (INTENT_KINDS.has(kind)) return true;
  if (!isRecord(parsed)) return false;
  if (kind === 'conversation-analysis' && INTENT_ANALYSES.has(String(parsed.analyse))) return true;
  const shown = parsed.shownIntents;
  return parsed.intentFilter !== undefined || (Array.isArray(shown) && shown.length > 0);
}

/**
 * Imported turns carry no intents unless labelled, and user-defined intents apply only to
 * conversations closed after they were added, so a fresh import's intent charts are empty.
 */
export const NO_INTENTS_LINE =
  `cas: no conversation in this project has an intent yet (no "${EVENT_NAMES.intentInformed}" events): ` +
  'label turns with an "intent" property, or add intents with cas intents add before importing ' +
  '(they are found in conversations closed from then on)';

export interface HintInput {
  kind: string;
  /** The chartControls as validated (defaults applied). */
  parsed: unknown;
  raw: unknown;
}

/** The lines to print on stderr for this chart; empty when it shows data or nothing can be said. */
export async function chartHints(
  input: HintInput,
  deps: { client: Client },
  timeoutMs = 10_000,
): Promise<string[]> {
  const parts = emptyParts(input.kind, input.raw);
  const named = namedInControls(input.parsed);
  const signal = AbortSignal.timeout(timeoutMs);
  const { client } = deps;
  // A chart with data: only its groups can be of a name nothing has.
  const grouped = parts.chart ? [] : await groupHints(named, input.raw, client, signal);
  if (!parts.chart && parts.series.length === 0) return grouped;
  let checked = named.events;
  if (!parts.chart) {
    const seriesNames = new Set(
      parts.series.flatMap((i) => {
        const filters = isRecord(input.parsed) ? input.parsed.eventFilters : undefined;
        const filter = Array.isArray(filters) ? filters[i] : undefined;
        return isRecord(filter) && typeof filter.event_name === 'string' ? [filter.event_name] : [];
      }),
    );
    checked = named.events.filter((e) => seriesNames.has(e.name));
  }
  const lines: string[] = [];
  let stats: EventStat[] | undefined;
  try {
    stats = await eventStats(client, {}, { signal });
  } catch (error) {
    if (!(error instanceof HttpError && error.status === 404)) return [];
  }
  const known = stats ? stats.map((s) => s.event) : await optional(listEventNames(client, {}, { signal }));
  if (known === undefined) return [];
  const range = rangeOf(input.parsed);
  if (parts.chart && range) {
    if (known.length === 0) return ['cas: this project has no events yet: import some with cas import'];
    const names = named.events.map((e) => e.name).filter((n) => known.includes(n));
    const span = stats ? spanOf(stats, names) : undefined;
    const start = resolveInstant(range.start, range.tz)?.getTime();
    const end = resolveInstant(range.end, range.tz)?.getTime();
    let outside = false;
    if (span && start !== undefined && end !== undefined) {
      outside = Date.parse(span.last) < start || Date.parse(span.first) >= end;
    } else if (!stats && start !== undefined && end !== undefined) {
      const counts = await optional(
        eventCounts(
          client,
          // The hosted service requires period and tz in each range (a 422 lost the hint); ours ignores them.
          [
            {
              start: new Date(start).toISOString(),
              end: new Date(end).toISOString(),
              period: range.period ?? 'day',
              tz: range.tz,
            },
          ],
          {},
          { signal },
        ),
      );
      outside = counts?.[0] === 0;
    }
    if (outside) {
      const line = emptyRangeLine(range, span, names.length > 0 ? `${quoteList(names)} events` : 'events');
      if (line) lines.push(line);
    }
  }
  if (parts.chart && readsIntents(input.kind, input.parsed) && !known.includes(EVENT_NAMES.intentInformed))
    lines.push(NO_INTENTS_LINE);
  const traitsKnown =
    named.traits.length > 0 || checked.some((e) => e.properties.length > 0)
      ? await optional(listUserTraits(client, {}, { signal }))
      : [];
  for (const event of checked) {
    if (event.name === ANY_EVENT) continue;
    if (!known.includes(event.name)) {
      lines.push(unknownEventLine(event.name, known));
      continue;
    }
    if (event.properties.length === 0) continue;
    const properties =
      (await optional(listProperties(client, { event_regex: exactRegex(event.name) }, { signal }))) ??
      (await optional(propertyStats(client, { event_name: event.name, top: 0 }, { signal })))?.map(
        (p) => p.property,
      );
    if (properties === undefined || traitsKnown === undefined) continue;
    for (const property of event.properties) {
      if (properties.includes(property) || traitsKnown.includes(property)) continue;
      lines.push(unknownPropertyLine(event.name, property, properties));
    }
  }
  if (parts.chart && traitsKnown !== undefined) {
    for (const trait of named.traits) {
      if (!traitsKnown.includes(trait)) lines.push(unknownTraitLine(trait, traitsKnown));
    }
  }
  return [...new Set([...lines, ...grouped])];
}
