import type { ChartContext } from './context.js';
import { span } from './context.js';
import { countCondition, type Matcher, windowCondition } from './event-filter.js';
import { eventScan, ScanValues } from './scan.js';
import type { Query } from './sql.js';

/**
 * A list of event or intent filters in a selecting position (decisions §6): each item holds for an
 * entity (a person, or a session for the session chart) when the entity's count of matching events
 * in the item's window satisfies `number_of_operator number_of`; items combine left to right with
 * and / or / then, `then` requiring the entity's first match of the item to come strictly after its
 * first match of the previous item.
 *
 * One scan over the union of the windows counts every item at once (count and min(ts) with FILTER);
 * the caller LEFT JOINs the result to its universe, so entities with no events read as count 0 and
 * rules such as `eq 0` or `lt 2` can hold for them.
 */
export interface CompiledList {
  /** CTE with column `key` and c<i>/f<i> per item. */
  cte: string;
  /** The combined rule over the CTE joined as `alias` (columns NULL when the entity had no match). */
  predicate(alias: string): string;
}

export function compileList(
  q: Query,
  ctx: ChartContext,
  key: 'person' | 'session_id',
  build: (values: ScanValues) => ReadonlyArray<Matcher>,
): CompiledList {
  const p = q.params;
  const values = new ScanValues(p);
  const items = build(values);
  const cte = countsCte(q, ctx, key, items, values, true);
  return {
    cte,
    predicate(alias) {
      let acc = '';
      items.forEach((m, i) => {
        const holds = countCondition(p, `coalesce(${alias}.c${i}, 0)`, m.op, m.n);
        if (i === 0) acc = holds;
        else if (m.combine === 'or') acc = `(${acc}) OR (${holds})`;
        else if (m.combine === 'and') acc = `(${acc}) AND (${holds})`;
        else acc = `(${acc}) AND (${holds}) AND coalesce(${alias}.f${i} > ${alias}.f${i - 1}, FALSE)`;
      });
      return acc === '' ? 'TRUE' : acc;
    },
  };
}

/**
 * One scan counting every item at once: per `key`, c<i> (matches of item i in its window) and, with
 * `firsts`, f<i> (its first match, which `then` compares). `values` must be the ones the items were
 * built with.
 */
export function countsCte(
  q: Query,
  ctx: ChartContext,
  key: 'person' | 'session_id',
  items: ReadonlyArray<Matcher>,
  values: ScanValues,
  firsts: boolean,
): string {
  const p = q.params;
  const scan = eventScan(
    q,
    ctx,
    span(
      items.map((m) => m.window),
      ctx.window,
    ),
    values,
  );
  const hits = items.map((m) => `(${m.condition}) AND ${windowCondition(p, m.window)}`);
  const columns = hits.flatMap((hit, i) => [
    `count(*) FILTER (WHERE ${hit})::DOUBLE AS c${i}`,
    ...(firsts ? [`min(s.ts) FILTER (WHERE ${hit}) AS f${i}`] : []),
  ]);
  return q.cte(
    q.fresh('list'),
    `SELECT s.${key} AS key, ${columns.join(', ')} FROM ${scan} s
     WHERE s.${key} IS NOT NULL AND (${hits.map((h) => `(${h})`).join(' OR ')}) GROUP BY s.${key}`,
  );
}
