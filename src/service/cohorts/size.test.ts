import { describe, expect, it } from 'vitest';
import type { CohortTerm } from '../../shared/cohorts.js';
import { expandedTerms, MAX_COHORT_SIZE, refuseLarge } from './size.js';
import type { CohortDefinitions } from './store.js';

const trait: CohortTerm = {
  operator: 'and',
  termFilter: { type: 'trait', with: [{ property_name: 'plan', operator: 'eq', values: ['pro'] }] },
} as CohortTerm;
const times = (name: string, n: number): CohortTerm[] =>
  Array.from({ length: n }, () => ({ operator: 'or', termFilter: { type: 'cohort', name } }) as CohortTerm);

describe('cohort size once nested cohorts are inlined', () => {
  it('multiplies through the levels, and stops counting past the limit', () => {
    const defs: CohortDefinitions = new Map([
      ['c0', [trait, trait]],
      ['c1', [...times('c0', 10), trait]],
      ['c2', times('c1', 100)],
      ['c3', times('c2', 100)],
    ]);
    // A trait term of one filter counts 2.
    expect(expandedTerms('c1', defs)).toBe(42);
    expect(expandedTerms('c2', defs)).toBeGreaterThan(MAX_COHORT_SIZE);
    // Counting stops past the limit: 100^3 terms are not walked.
    expect(expandedTerms('c3', defs)).toBeLessThan(2 * MAX_COHORT_SIZE + 100);
  });

  it("counts each term's filters: 100 terms of 100 regexes each is past the limit", () => {
    const regexes: CohortTerm = {
      operator: 'or',
      termFilter: {
        type: 'event',
        event_name: 'Any Event',
        with: Array.from({ length: 100 }, (_, j) => ({
          property_name: 'user',
          operator: 'regex',
          values: [`x${j}`],
        })),
      },
    } as CohortTerm;
    expect(
      expandedTerms('big', new Map([['big', Array.from({ length: 100 }, () => regexes)]])),
    ).toBeGreaterThan(MAX_COHORT_SIZE);
    expect(expandedTerms('ok', new Map([['ok', Array.from({ length: 9 }, () => regexes)]]))).toBe(909);
  });

  it('refuses a chart naming a cohort over the limit (one saved before the limit, or edited by hand)', () => {
    const defs: CohortDefinitions = new Map([
      ['c0', [trait]],
      ['c1', times('c0', 100)],
      ['c2', times('c1', 100)],
    ]);
    expect(refuseLarge('c1', defs, 'userFilters[0].cohort')).toBeUndefined();
    expect(refuseLarge('c2', defs, 'userFilters[0].cohort')).toEqual({
      path: 'userFilters[0].cohort',
      message: expect.stringMatching(/^cohort "c2" is more than 1,000 terms and filters/),
    });
  });
});
