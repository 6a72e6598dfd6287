import { describe, expect, it } from 'vitest';
import type { CohortTerm } from '../../shared/cohorts.js';
import type { Queryable } from '../store/database.js';
import { makeContext } from './context.js';
import { Query } from './sql.js';
import { userSelection } from './user-selection.js';

const RANGE = { start: '2025-01-01', end: '2025-01-31', period: 'day', tz: 'UTC' } as const;

/** The SQL a chart's user selection compiles to (nothing runs: the queryable is never called). */
function selectionSql(
  cohorts: Map<string, CohortTerm[]>,
  filters: Parameters<typeof userSelection>[2],
): string {
  const q = new Query();
  const ctx = makeContext({} as Queryable, 'p', RANGE, {}, 0, { cohorts });
  const selected = userSelection(q, ctx, filters, undefined);
  return q.sql(`SELECT person FROM ${selected}`);
}

const tagIs = (value: string): CohortTerm => ({
  operator: 'or',
  termFilter: { type: 'trait', with: [{ property_name: 'tag', operator: 'eq', values: [value] }] },
});

describe('userSelection', () => {
  // Inlined at every use, a cohort of 100 terms on one trait extracted it 200 times per person:
  // 3.6 s and 0.65 GB for 60k users, and out of memory at 400 terms (found by probing).
  it('extracts each trait its filters and cohorts read once per person, whatever the number of terms', () => {
    const cohorts = new Map<string, CohortTerm[]>([
      ['tags', Array.from({ length: 100 }, (_, i) => tagIs(`t${i}`))],
      [
        'more',
        [
          ...Array.from({ length: 50 }, (_, i) => tagIs(`u${i}`)),
          { operator: 'or', termFilter: { type: 'cohort', name: 'tags' } },
        ],
      ],
    ]);
    const sql = selectionSql(cohorts, [
      { cohort: 'more', combine_previous_operation: 'or' },
      {
        with: [
          { property_name: 'tag', operator: 'eq', values: ['x'] },
          { property_name: 'plan', operator: 'eq', values: ['pro'] },
        ],
        combine_previous_operation: 'or',
      },
    ]);
    expect(sql.match(/json_extract\(/g)).toHaveLength(2);
    expect(sql.match(/trait_value_0/g)?.length).toBeGreaterThan(150);
  });
});
