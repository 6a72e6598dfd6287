import { describe, expect, it } from 'vitest';
import { termsText } from '../render/cohorts.js';
import { cohortBodySchema } from '../shared/cohorts.js';
import { cohortBody } from './cohorts.js';
import { UsageError } from './errors.js';

const seq = (...pairs: Array<[string, string]>) => pairs.map(([flag, value]) => ({ flag, value }));

describe('cohortBody: the chart user-filter flags as cohort terms', () => {
  it('puts every --user-where in one trait term, and each --performed (with its --where) in an event term', () => {
    const body = cohortBody({
      name: 'Pro buyers',
      description: 'pro plan, bought twice',
      userWhere: ['plan = pro', 'seats >= 5'],
      sequence: seq(
        ['performed', 'Purchase >= 2'],
        ['where', 'amount > 10'],
        ['performed', 'Signed Up'],
        ['intent', 'refund'],
      ),
      cohort: ['Teams'],
    });
    expect(body).toEqual({
      name: 'Pro buyers',
      description: 'pro plan, bought twice',
      terms: [
        { operator: 'and', termFilter: { type: 'intent', intent: 'refund' } },
        {
          operator: 'and',
          termFilter: {
            type: 'trait',
            with: [
              { property_name: 'plan', operator: 'eq', values: ['pro'] },
              { property_name: 'seats', operator: 'gte', values: [5] },
            ],
          },
        },
        {
          operator: 'and',
          termFilter: {
            type: 'event',
            event_name: 'Purchase',
            with: [{ property_name: 'amount', operator: 'gt', values: [10] }],
            number_of: 2,
            number_of_operator: 'gte',
          },
        },
        { operator: 'and', termFilter: { type: 'event', event_name: 'Signed Up' } },
        { operator: 'and', termFilter: { type: 'cohort', name: 'Teams' } },
      ],
    });
    expect(cohortBodySchema.safeParse(body).success).toBe(true);
  });

  it('--any joins the terms with or', () => {
    const body = cohortBody({
      name: 'x',
      userWhere: ['a = 1'],
      sequence: seq(['performed', 'B']),
      any: true,
    });
    expect(body.terms.map((t) => t.operator)).toEqual(['or', 'or']);
  });

  // A chart's repeated --intent selects users who showed any of them; the cohort needed all of them.
  it('joins repeated --intent by OR, first, so the other terms AND with the lot', () => {
    const body = cohortBody({
      name: 'x',
      userWhere: ['plan = pro'],
      sequence: seq(['intent', 'refund'], ['intent', 'complaint']),
    });
    expect(body.terms.map((t) => [t.operator, t.termFilter.type])).toEqual([
      ['and', 'intent'],
      ['or', 'intent'],
      ['and', 'trait'],
    ]);
  });

  // --any left every --user-where in one trait term, whose conditions are ANDed.
  it('--any makes each --user-where a term of its own, and names the bad one', () => {
    const body = cohortBody({ name: 'x', userWhere: ['plan = free', 'seats > 15'], any: true });
    expect(body.terms).toEqual([
      {
        operator: 'or',
        termFilter: { type: 'trait', with: [{ property_name: 'plan', operator: 'eq', values: ['free'] }] },
      },
      {
        operator: 'or',
        termFilter: { type: 'trait', with: [{ property_name: 'seats', operator: 'gt', values: [15] }] },
      },
    ]);
  });

  it('refuses a cohort without terms and names a bad flag value', () => {
    expect(() => cohortBody({ name: 'x' })).toThrow(UsageError);
    expect(() => cohortBody({ name: 'x', userWhere: ['plan'] })).toThrow(/--user-where "plan"/);
    expect(() => cohortBody({ name: 'x', sequence: seq(['where', 'a = 1']) })).toThrow(/--where/);
    expect(() => cohortBody({ name: '', userWhere: ['a = 1'] })).toThrow(/name/);
  });
});

describe('termsText', () => {
  it('writes terms back in the flags grammar', () => {
    const parsed = cohortBodySchema.parse(
      cohortBody({
        name: 'x',
        userWhere: ['plan in pro,team', "city = 'New York'"],
        sequence: seq(['performed', 'Purchase >= 3'], ['where', 'amount between 1,5']),
      }),
    );
    expect(termsText(parsed.terms)).toBe(
      'plan in pro,team and city = \'New York\' and performed "Purchase" >= 3 where amount between 1,5',
    );
  });
});
