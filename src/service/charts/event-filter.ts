import {
  ANY_EVENT,
  ANY_INTENT,
  type CountOperator,
  type EventFilter,
  type IntentFilter,
  type PropertyFilter,
} from '../../shared/chart-filters.js';
import { type ChartContext, resolveWithin, type Window } from './context.js';
import { propertyCondition } from './property-filter.js';
import type { ScanValues } from './scan.js';
import { all, type Params } from './sql.js';

/** The event name the service gives intents (decisions §5). */
export const INTENT_EVENT = 'Intent Informed';

/**
 * One EventFilter or IntentFilter, reduced to what every position needs: a condition on an event
 * row (alias `s` of an eventScan carrying the filter's ScanValues), the window it counts in, and its
 * count rule.
 */
export interface Matcher {
  condition: string;
  window: Window;
  op: CountOperator;
  n: number;
  combine: 'and' | 'or' | 'then';
}

function withConditions(p: Params, filters: ReadonlyArray<PropertyFilter> | undefined, values: ScanValues) {
  return (filters ?? []).map((f) => propertyCondition(p, f, values.of(f.property_name)));
}

/** The event's name and `with` filters, on a scan row `s` whose values come from `values`. */
export function eventCondition(p: Params, f: EventFilter, values: ScanValues): string {
  const name = f.event_name === ANY_EVENT ? [] : [`s.event = ${p.bind(f.event_name)}`];
  return all([...name, ...withConditions(p, f.with, values)]);
}

export function intentCondition(p: Params, f: IntentFilter, values: ScanValues): string {
  const name =
    f.intent === ANY_INTENT ? [] : [`json_extract_string(s.properties, '/intent') = ${p.bind(f.intent)}`];
  return all([`s.event = ${p.bind(INTENT_EVENT)}`, ...name, ...withConditions(p, f.with, values)]);
}

export function eventMatcher(p: Params, ctx: ChartContext, f: EventFilter, values: ScanValues): Matcher {
  return {
    condition: eventCondition(p, f, values),
    window: resolveWithin(f.within, ctx.range, ctx.window),
    op: f.number_of_operator,
    n: f.number_of,
    combine: f.combine_previous_operation,
  };
}

export function intentMatcher(p: Params, ctx: ChartContext, f: IntentFilter, values: ScanValues): Matcher {
  return {
    condition: intentCondition(p, f, values),
    window: resolveWithin(f.within, ctx.range, ctx.window),
    op: f.number_of_operator,
    n: f.number_of,
    combine: f.combine_previous_operation,
  };
}

const COMPARE: Record<CountOperator, string> = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** `count op n`; the operator is one of five fixed symbols, n a bound number. */
export function countCondition(p: Params, count: string, op: CountOperator, n: number): string {
  return `${count} ${COMPARE[op]} ${p.number(n)}`;
}

/** True when the rule holds for every user with at least one match (`>= 1`, `> 0`): nothing to check. */
export function impliedByOneMatch(m: Pick<Matcher, 'op' | 'n'>): boolean {
  return (m.op === 'gte' && m.n <= 1) || (m.op === 'gt' && m.n === 0);
}

export function windowCondition(p: Params, w: Window, ts = 's.ts'): string {
  return `${ts} >= ${p.instant(w.lo)} AND ${ts} < ${p.instant(w.hi)}`;
}
