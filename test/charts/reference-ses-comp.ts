import type { ChartScope } from '../../src/service/charts/context.js';
import type { SessionControls, UserCompositionControls } from '../../src/shared/chart-controls.js';
import type {
  CompositionSlice,
  SessionChartResponse,
  SessionPoint,
  UserCompositionResponse,
} from '../../src/shared/chart-responses.js';
import type { SeedData, SeedSession } from '../helpers/seed.js';
import {
  groupKeyOf,
  groupLabel,
  groupOfValue,
  heaviest,
  listedOf,
  present,
  shownKeys,
} from './reference-values.js';
import { World } from './reference-world.js';

/** Brute-force session and user-composition charts straight from decisions §6, for property tests. */

export function referenceSessions(
  data: SeedData,
  c: SessionControls,
  scope: ChartScope = {},
): SessionChartResponse {
  const w = new World(data, c.range, scope);
  const selected = w.selection(c.userFilters, c.shownIntents);
  const items = (c.eventFilters ?? []).map((f) => w.eventItem(f));
  const listed = listedOf(c.groupBy?.trait_values);
  const conversationSessions = (data.conversations ?? [])
    .filter((x) => x.conversation_id === scope.conversation_id)
    .map((x) => x.session_id);
  const kept: Array<{ s: SeedSession; bin: number; key: string }> = [];
  for (const s of w.sessions) {
    const t = Date.parse(s.started_at);
    if (!w.inRange(t)) continue;
    if (scope.session_id !== undefined && s.session_id !== scope.session_id) continue;
    if (scope.conversation_id !== undefined && !conversationSessions.includes(s.session_id)) continue;
    const person = w.personOf(s.user_id)!;
    if (selected?.has(person) === false) continue;
    if (
      !w.listHolds(
        items,
        w.events.filter((e) => e.session_id === s.session_id),
      )
    )
      continue;
    const key = c.groupBy ? groupOfValue(present(w.persons.get(person), c.groupBy.trait_name), listed) : '';
    if (key === undefined) continue;
    kept.push({ s, bin: w.binOf(t)!, key });
  }
  const conversations = (id: string) => (data.conversations ?? []).filter((x) => x.session_id === id).length;
  const pointsOf = (key: string): SessionPoint[] =>
    w.bins.map((bin, b) => {
      const here = kept
        .filter((x) => x.bin === b && x.key === key)
        .map((x) => x.s)
        .sort(
          (x, y) =>
            Date.parse(x.started_at) - Date.parse(y.started_at) || (x.session_id < y.session_id ? -1 : 1),
        );
      const lengths = here.map(
        (s) => (Date.parse(s.ended_at ?? s.last_event_at ?? s.started_at) - Date.parse(s.started_at)) / 1000,
      );
      return {
        start: bin.startIso,
        end: bin.endIso,
        sessions: here.length,
        session_ids: here.slice(0, 1000).map((s) => s.session_id),
        conversations: here.reduce((n, s) => n + conversations(s.session_id), 0),
        average_length: here.length === 0 ? 0 : lengths.reduce((a, b) => a + b, 0) / here.length,
      };
    });
  if (!c.groupBy) return { chart_name: 'Sessions', points: pointsOf('') };
  const weights = new Map<string, number>();
  for (const x of kept) weights.set(x.key, (weights.get(x.key) ?? 0) + 1);
  const keys = shownKeys(weights, listed);
  return {
    chart_name: 'Sessions',
    groups: keys.map((key) => ({ group: groupLabel(key, listed), points: pointsOf(key) })),
  };
}

function slices(c: UserCompositionControls, keys: ReadonlyArray<string | undefined>): CompositionSlice[] {
  const listed = listedOf(c.selectedTrait.trait_values);
  const counts = new Map<string | undefined, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  let shown: Array<{ label: string; value: number }>;
  if (listed) {
    shown = listed.map((v, i) => ({ label: String(v), value: counts.get(String(i)) ?? 0 }));
  } else {
    const named = new Map([...counts.entries()].filter((e): e is [string, number] => e[0] !== undefined));
    shown = heaviest(named, Number.POSITIVE_INFINITY).map((k) => ({ label: k, value: named.get(k)! }));
    const none = counts.get(undefined);
    if (none !== undefined) shown.push({ label: '(none)', value: none });
  }
  const total = shown.reduce((s, x) => s + x.value, 0);
  return shown.map((s) => ({ ...s, percent: total === 0 ? 0 : (100 * s.value) / total }));
}

export function referenceComposition(
  data: SeedData,
  c: UserCompositionControls,
  scope: ChartScope = {},
): UserCompositionResponse {
  const w = new World(data, c.range, scope);
  const selected = w.selection(c.userFilters, c.shownIntents);
  const active = new Set<string>();
  for (const e of w.events) {
    if (w.inRange(e.t) && e.person !== null && selected?.has(e.person) !== false) active.add(e.person);
  }
  const listedSlices = listedOf(c.selectedTrait.trait_values);
  const people = [...active].map((p) => {
    const traits = w.persons.get(p);
    return {
      slice: groupKeyOf(present(traits, c.selectedTrait.trait_name), listedSlices),
      group: c.groupBy
        ? groupOfValue(present(traits, c.groupBy.trait_name), listedOf(c.groupBy.trait_values))
        : '',
    };
  });
  const chart_name = c.selectedTrait.trait_name;
  if (!c.groupBy) {
    const s = slices(
      c,
      people.map((x) => x.slice).filter((k) => !listedSlices || k !== undefined),
    );
    const ps = s.map((x) => x.percent);
    const vs = s.map((x) => x.value);
    const pick = (f: (...n: number[]) => number, xs: number[]) => (xs.length === 0 ? 0 : f(...xs));
    return {
      chart_name,
      slices: s,
      highlights: {
        max_percent: pick(Math.max, ps),
        min_percent: pick(Math.min, ps),
        max_count: pick(Math.max, vs),
        min_count: pick(Math.min, vs),
      },
    };
  }
  const listedGroups = listedOf(c.groupBy.trait_values);
  const inGroups = people.filter((x) => x.group !== undefined && (!listedSlices || x.slice !== undefined));
  const weights = new Map<string, number>();
  for (const x of inGroups) weights.set(x.group!, (weights.get(x.group!) ?? 0) + 1);
  const keys = shownKeys(weights, listedGroups);
  return {
    chart_name,
    groups: keys.map((key) => ({
      group: groupLabel(key, listedGroups),
      slices: slices(
        c,
        inGroups.filter((x) => x.group === key).map((x) => x.slice),
      ),
    })),
  };
}
