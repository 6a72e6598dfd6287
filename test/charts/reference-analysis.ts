import type { ChartScope } from '../../src/service/charts/context.js';
import { type ConversionWindow, windowMs } from '../../src/shared/analysis-controls.js';
import type {
  FunnelResponse,
  IntentDistributionResponse,
  SentimentResponse,
  Slice,
} from '../../src/shared/analysis-responses.js';
import type {
  FunnelControls,
  IntentDistributionControls,
  SentimentAnalysisControls,
} from '../../src/shared/chart-controls.js';
import type { TraitGroup } from '../../src/shared/chart-filters.js';
import { eventRank } from '../../src/shared/event-order.js';
import type { SeedData, SeedEvent } from '../helpers/seed.js';
import {
  countHolds,
  groupLabel,
  groupOfValue,
  listedOf,
  present,
  shownKeys,
  textOf,
} from './reference-values.js';
import { type RefEvent, type Win, World } from './reference-world.js';

/**
 * Brute-force references of the funnel, intent-distribution and sentiment charts, written from the
 * rules in shared/analysis-controls.ts over plain objects (World applies identity, scope and filters).
 * Test-only; shares nothing with the SQL besides the `within` arithmetic World already shares.
 */

type Ev = RefEvent & { id: string };

/** World's events with the ids test/helpers/seed.ts gives them (`ev-<index>` in data order). */
function withIds(w: World, data: SeedData): Ev[] {
  // World keeps data order and drops only whole-content-equal groups (by scope), so the n-th event
  // with a given content is the n-th seeded one with it.
  const key = (e: SeedEvent) =>
    JSON.stringify([
      e.event,
      e.ts,
      e.user_id ?? null,
      e.session_id ?? null,
      e.conversation_id ?? null,
      e.properties ?? null,
    ]);
  const ids = new Map<string, string[]>();
  for (const [i, e] of (data.events ?? []).entries())
    ids.set(key(e), [...(ids.get(key(e)) ?? []), `ev-${i}`]);
  const used = new Map<string, number>();
  return w.events.map((e) => {
    const n = used.get(key(e)) ?? 0;
    used.set(key(e), n + 1);
    return { ...e, id: ids.get(key(e))![n]! };
  });
}

const intersect = (a: Win, b: Win): Win => ({ lo: Math.max(a.lo, b.lo), hi: Math.min(a.hi, b.hi) });
const inWin = (t: number, w: Win) => t >= w.lo && t < w.hi;

function order(a: Ev, b: Ev): number {
  const ra = eventRank({ event: a.event });
  const rb = eventRank({ event: b.event });
  return a.t - b.t || ra - rb || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function groupOf(w: World, person: string, g: TraitGroup | undefined): string | undefined {
  if (!g) return '';
  return groupOfValue(present(w.persons.get(person), g.trait_name), listedOf(g.trait_values));
}

/** The groups shown: every listed value in order, else the heaviest observed keys, then `(none)`. */
function shown(g: TraitGroup, weights: Map<string, number>): Array<{ key: string; label: string }> {
  const listed = listedOf(g.trait_values);
  return shownKeys(weights, listed).map((key) => ({ key, label: groupLabel(key, listed) }));
}

export function referenceFunnel(data: SeedData, c: FunnelControls, scope: ChartScope = {}): FunnelResponse {
  const w = new World(data, c.range, scope);
  const events = withIds(w, data);
  const selected = w.selection(c.userFilters, c.shownIntents);
  const windows = c.eventFilters.map((f) => intersect(w.windowOf(f.within), w.range));
  const limit = (t0: number, cw: ConversionWindow | undefined) => (cw ? t0 + windowMs(cw) : Infinity);
  const reached = new Map<string, number>();
  const people = new Set(events.map((e) => e.person).filter((p): p is string => p !== null));
  for (const person of people) {
    if (selected && !selected.has(person)) continue;
    const mine = events.filter((e) => e.person === person).sort(order);
    let previous: Ev | undefined;
    let t0 = 0;
    let last = -1;
    for (const [k, f] of c.eventFilters.entries()) {
      const next = mine.find(
        (e) =>
          w.eventMatches(f, e) &&
          inWin(e.t, windows[k]!) &&
          (previous === undefined || order(e, previous) > 0) &&
          (k === 0 || e.t < limit(t0, c.conversionWindow)),
      );
      if (!next) break;
      if (k === 0) t0 = next.t;
      previous = next;
      last = k;
    }
    if (last >= 0) reached.set(person, last);
  }
  const stepsOf = (persons: string[]) => {
    const counts = c.eventFilters.map((_, k) => persons.filter((p) => reached.get(p)! >= k).length);
    return c.eventFilters.map((f, k) => ({
      event: f.event_name,
      count: counts[k]!,
      percent: counts[0] === 0 ? 0 : (100 * counts[k]!) / counts[0]!,
    }));
  };
  if (!c.groupBy) {
    const events_ = stepsOf([...reached.keys()]);
    const first = events_[0]!.count;
    const last = events_.at(-1)!.count;
    return {
      chart_name: 'Funnel',
      events: events_,
      highlights: { number_of_users: first, conversion_rate: first === 0 ? 0 : (100 * last) / first },
    };
  }
  const byGroup = new Map<string, string[]>();
  for (const p of reached.keys()) {
    const g = groupOf(w, p, c.groupBy);
    if (g !== undefined) byGroup.set(g, [...(byGroup.get(g) ?? []), p]);
  }
  const weights = new Map([...byGroup].map(([g, ps]) => [g, ps.length]));
  return {
    chart_name: 'Funnel',
    groups: shown(c.groupBy, weights).map((g) => ({
      group: g.label,
      events: stepsOf(byGroup.get(g.key) ?? []),
    })),
  };
}

/** Slices from per-label values: observed (largest first, ties by label) or fixed labels in order. */
function slicesOf(values: Map<string, number>, labels?: readonly string[]): Slice[] {
  const entries = labels
    ? labels.map((l) => [l, values.get(l) ?? 0] as const)
    : [...values].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  const total = entries.reduce((s, [, v]) => s + v, 0);
  return entries.map(([label, value]) => ({
    label,
    value,
    percent: total === 0 ? 0 : (100 * value) / total,
  }));
}

const pairOf = (e: RefEvent) => `${e.session_id ?? '\u0001'}\u0000${e.conversation_id}`;

/** value per (group, label) from distinct keys `group \0 label \0 item`. */
function tally(keys: Set<string>): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const key of keys) {
    const [g, label] = key.split('\u0002') as [string, string];
    const m = out.get(g) ?? new Map<string, number>();
    m.set(label, (m.get(label) ?? 0) + 1);
    out.set(g, m);
  }
  return out;
}

export function referenceIntentDistribution(
  data: SeedData,
  c: IntentDistributionControls,
  scope: ChartScope = {},
): IntentDistributionResponse {
  const w = new World(data, c.range, scope);
  const selected = w.selection(c.userFilters, c.shownIntents);
  const keys = new Set<string>();
  for (const e of w.events) {
    if (e.event !== 'Intent Informed' || !e.conversation_id || e.person === null || !w.inRange(e.t)) continue;
    if (selected && !selected.has(e.person)) continue;
    const intent = textOf(present(e.properties, 'intent'));
    const g = groupOf(w, e.person, c.groupBy);
    if (intent === undefined || g === undefined) continue;
    keys.add(`${g}\u0002${intent}\u0002${pairOf(e)}`);
  }
  const byGroup = tally(keys);
  if (!c.groupBy) {
    const slices = slicesOf(byGroup.get('') ?? new Map());
    const ps = slices.map((s) => s.percent);
    const vs = slices.map((s) => s.value);
    const pick = (f: (...n: number[]) => number, xs: number[]) => (xs.length === 0 ? 0 : f(...xs));
    return {
      chart_name: 'Intents',
      slices,
      highlights: {
        max_percent: pick(Math.max, ps),
        min_percent: pick(Math.min, ps),
        max_count: pick(Math.max, vs),
        min_count: pick(Math.min, vs),
      },
    };
  }
  const weights = new Map([...byGroup].map(([g, m]) => [g, [...m.values()].reduce((a, b) => a + b, 0)]));
  return {
    chart_name: 'Intents',
    groups: shown(c.groupBy, weights).map((g) => ({
      group: g.label,
      slices: slicesOf(byGroup.get(g.key) ?? new Map()),
    })),
  };
}

const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

export function referenceSentiment(
  data: SeedData,
  c: SentimentAnalysisControls,
  scope: ChartScope = {},
): SentimentResponse {
  const w = new World(data, c.range, scope);
  const selected = w.selection(c.userFilters, c.shownIntents);
  const f = c.intentFilter;
  const within = w.windowOf(f.within);
  const matches = new Map<string, number>();
  for (const e of w.events) {
    if (!e.conversation_id || !inWin(e.t, within) || !w.intentMatches(f, e)) continue;
    matches.set(pairOf(e), (matches.get(pairOf(e)) ?? 0) + 1);
  }
  const latest = new Map<string, RefEvent>();
  for (const e of w.events) {
    if (e.event !== 'Conversation Summary' || !e.conversation_id || e.person === null || !w.inRange(e.t))
      continue;
    const seen = latest.get(pairOf(e));
    if (!seen || e.t > seen.t) latest.set(pairOf(e), e);
  }
  const keys = new Set<string>();
  for (const [pair, e] of latest) {
    const sentiment = textOf(present(e.properties, 'sentiment'));
    if (!SENTIMENTS.some((s) => s === sentiment)) continue;
    if (!countHolds(matches.get(pair) ?? 0, f.number_of_operator, f.number_of)) continue;
    if (selected && !selected.has(e.person!)) continue;
    const g = groupOf(w, e.person!, c.groupBy);
    if (g !== undefined) keys.add(`${g}\u0002${sentiment}\u0002${pair}`);
  }
  const byGroup = tally(keys);
  if (!c.groupBy) {
    const slices = slicesOf(byGroup.get('') ?? new Map(), SENTIMENTS);
    const of = (l: string) => slices.find((s) => s.label === l)!;
    return {
      chart_name: 'Sentiment',
      slices,
      highlights: {
        positive_percent: of('positive').percent,
        positive_total: of('positive').value,
        negative_percent: of('negative').percent,
        negative_total: of('negative').value,
        neutral_percent: of('neutral').percent,
        neutral_total: of('neutral').value,
      },
    };
  }
  const weights = new Map([...byGroup].map(([g, m]) => [g, [...m.values()].reduce((a, b) => a + b, 0)]));
  return {
    chart_name: 'Sentiment',
    groups: shown(c.groupBy, weights).map((g) => ({
      group: g.label,
      slices: slicesOf(byGroup.get(g.key) ?? new Map(), SENTIMENTS),
    })),
  };
}
