import { type ChartScope, resolveWithin } from '../../src/service/charts/context.js';
import type {
  ChartRange,
  CountOperator,
  EventFilter,
  IntentFilter,
  TimeWithin,
  UserFilter,
} from '../../src/shared/chart-filters.js';
import { type Bin, binStartOf, binsOf, resolveInstant } from '../../src/shared/time-bins.js';
import type { Json, SeedData, SeedEvent, SeedSession } from '../helpers/seed.js';
import { countHolds, lookup, passes, present, textOf } from './reference-values.js';

/**
 * The data of one project as plain objects, with the identity and filter rules of decisions §3/§6
 * applied by brute force. Test-only; deliberately shares nothing with the SQL compiler except the
 * `within` window arithmetic (which has its own hand-computed tests).
 */

export interface RefEvent extends SeedEvent {
  t: number;
  person: string | null;
  traits: Record<string, Json> | undefined;
}

export interface Win {
  lo: number;
  hi: number;
}

interface Item {
  match(e: RefEvent): boolean;
  window: Win;
  op: CountOperator;
  n: number;
  combine: 'and' | 'or' | 'then';
}

export class World {
  readonly persons = new Map<string, Record<string, Json>>();
  readonly events: RefEvent[];
  readonly sessions: SeedSession[];
  readonly bins: Bin[];
  readonly range: Win;
  private readonly canonical = new Map<string, string>();

  constructor(
    readonly data: SeedData,
    readonly chart: ChartRange,
    readonly scope: ChartScope,
  ) {
    for (const u of data.users ?? []) {
      const canonical = u.canonical_user_id ?? u.user_id;
      this.canonical.set(u.user_id, canonical);
      if (canonical === u.user_id) this.persons.set(u.user_id, u.traits ?? {});
    }
    this.events = (data.events ?? [])
      .filter((e) => scope.session_id === undefined || e.session_id === scope.session_id)
      .filter((e) => scope.conversation_id === undefined || e.conversation_id === scope.conversation_id)
      .map((e) => {
        const person = this.personOf(e.user_id ?? null);
        return {
          ...e,
          t: Date.parse(e.ts),
          person,
          traits: person === null ? undefined : this.persons.get(person),
        };
      });
    this.sessions = data.sessions ?? [];
    this.bins = binsOf(chart);
    this.range = {
      lo: resolveInstant(chart.start, chart.tz)!.getTime(),
      hi: resolveInstant(chart.end, chart.tz)!.getTime(),
    };
  }

  personOf(raw: string | null): string | null {
    return raw === null ? null : (this.canonical.get(raw) ?? raw);
  }

  /** Index of the bin holding instant t, or undefined outside the bins. */
  binOf(t: number): number | undefined {
    const start = binStartOf(new Date(t), this.chart.period, this.chart.tz).getTime();
    const i = this.bins.findIndex((b) => b.start.getTime() === start);
    return i < 0 ? undefined : i;
  }

  inRange(t: number): boolean {
    return t >= this.range.lo && t < this.range.hi;
  }

  windowOf(within: TimeWithin | undefined): Win {
    const w = resolveWithin(within, this.chart, { lo: new Date(this.range.lo), hi: new Date(this.range.hi) });
    return { lo: w.lo.getTime(), hi: w.hi.getTime() };
  }

  eventMatches(f: EventFilter, e: RefEvent): boolean {
    if (f.event_name !== 'Any Event' && e.event !== f.event_name) return false;
    return (f.with ?? []).every((p) => passes(p, lookup(e.properties, e.traits, p.property_name)));
  }

  intentMatches(f: IntentFilter, e: RefEvent): boolean {
    if (e.event !== 'Intent Informed') return false;
    const intent = textOf(present(e.properties, 'intent'));
    if (f.intent !== 'Any Intent' && intent !== f.intent) return false;
    return (f.with ?? []).every((p) => passes(p, lookup(e.properties, e.traits, p.property_name)));
  }

  eventItem(f: EventFilter): Item {
    return {
      match: (e) => this.eventMatches(f, e),
      window: this.windowOf(f.within),
      op: f.number_of_operator,
      n: f.number_of,
      combine: f.combine_previous_operation,
    };
  }

  intentItem(f: IntentFilter): Item {
    return {
      match: (e) => this.intentMatches(f, e),
      window: this.windowOf(f.within),
      op: f.number_of_operator,
      n: f.number_of,
      combine: f.combine_previous_operation,
    };
  }

  /** Count of `item`'s matches among `events` inside its window. */
  count(item: Item, events: ReadonlyArray<RefEvent>): number {
    return events.filter((e) => e.t >= item.window.lo && e.t < item.window.hi && item.match(e)).length;
  }

  /** Left-to-right and / or / then over a list, for one entity's events. */
  listHolds(items: ReadonlyArray<Item>, events: ReadonlyArray<RefEvent>): boolean {
    let acc = true;
    let previousFirst: number | undefined;
    items.forEach((item, i) => {
      const hits = events.filter((e) => e.t >= item.window.lo && e.t < item.window.hi && item.match(e));
      const first = hits.length === 0 ? undefined : Math.min(...hits.map((e) => e.t));
      const holds = countHolds(hits.length, item.op, item.n);
      if (i === 0) acc = holds;
      else if (item.combine === 'or') acc = acc || holds;
      else if (item.combine === 'and') acc = acc && holds;
      else acc = acc && holds && first !== undefined && previousFirst !== undefined && first > previousFirst;
      previousFirst = first;
    });
    return acc;
  }

  eventsOf(person: string): RefEvent[] {
    return this.events.filter((e) => e.person === person);
  }

  /** Persons chosen by userFilters and chart-level shownIntents; undefined when nothing narrows them. */
  selection(
    filters: ReadonlyArray<UserFilter> | undefined,
    intents: ReadonlyArray<IntentFilter> | undefined,
  ) {
    const fs = filters ?? [];
    const is = intents ?? [];
    if (fs.length === 0 && is.length === 0) return undefined;
    const chosen = new Set<string>();
    for (const [person, traits] of this.persons) {
      const events = this.eventsOf(person);
      let acc = true;
      fs.forEach((f, i) => {
        const holds =
          (f.with ?? []).every((p) => passes(p, present(traits, p.property_name))) &&
          this.listHolds(
            (f.shown_intents ?? []).map((x) => this.intentItem(x)),
            events,
          ) &&
          this.listHolds(
            (f.performed_events ?? []).map((x) => this.eventItem(x)),
            events,
          );
        acc = i === 0 ? holds : f.combine_previous_operation === 'and' ? acc && holds : acc || holds;
      });
      const intentOk =
        is.length === 0 ||
        is.some((x) => this.listHolds([{ ...this.intentItem(x), combine: 'and' }], events));
      if (acc && intentOk) chosen.add(person);
    }
    return chosen;
  }
}
