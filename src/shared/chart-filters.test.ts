import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { controlsIssues } from './chart-controls.js';
import {
  chartRangeSchema,
  chartRangeSchemaWith,
  eventFilterSchema,
  groupByPropertySchema,
  intentFilterSchema,
  propertyFilterSchema,
  timeWithinSchema,
  traitGroupSchema,
  userFilterSchema,
} from './chart-filters.js';

/** `path: message` lines, the form a 400 body shows. */
function problems(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : controlsIssues(result.error).map((i) => `${i.path}: ${i.message}`);
}

describe('PropertyFilter', () => {
  it('defaults operator to eq', () => {
    expect(propertyFilterSchema.parse({ property_name: 'plan', values: ['pro'] })).toEqual({
      property_name: 'plan',
      operator: 'eq',
      values: ['pro'],
    });
  });

  it('accepts each operator with a fitting value list', () => {
    const ok: Array<[string, unknown[]]> = [
      ['eq', [true]],
      ['neq', [3]],
      ['in', ['a', 'b', 'c']],
      ['nin', ['a']],
      ['case_insensitive_eq', ['Pro']],
      ['case_insensitive_neq', ['Pro']],
      ['regex', ['^pro']],
      ['not_regex', ['x$']],
      ['between', [1, 5]],
      ['between', ['2025-01-01T00:00:00Z', '2025-02-01T00:00:00+01:00']],
      ['gt', [1.5]],
      ['gte', ['2025-01-01T00:00:00Z']],
      ['lt', [0]],
      ['lte', [-2]],
    ];
    for (const [operator, values] of ok) {
      expect(problems(propertyFilterSchema, { property_name: 'p', operator, values }), operator).toEqual([]);
    }
  });

  it('names the values list or the bad value in each error', () => {
    const cases: Array<[string, unknown[], string[]]> = [
      ['eq', ['a', 'b'], ['values: operator eq takes exactly one value']],
      ['eq', [], ['values: operator eq takes exactly one value']],
      ['in', [], ['values: operator in takes at least one value']],
      ['nin', [], ['values: operator nin takes at least one value']],
      ['between', [1], ['values: operator between takes exactly two values']],
      ['between', [1, 2, 3], ['values: operator between takes exactly two values']],
      ['between', [1, '2025-01-01T00:00:00Z'], ['values: between takes two numbers or two times']],
      ['regex', [5], ['values[0]: operator regex takes a string']],
      ['not_regex', [true], ['values[0]: operator not_regex takes a string']],
      ['gt', ['ten'], ['values[0]: operator gt takes a number or an ISO 8601 time with Z or an offset']],
      ['lte', [false], ['values[0]: operator lte takes a number or an ISO 8601 time with Z or an offset']],
      [
        'between',
        [1, 'x'],
        ['values[1]: operator between takes a number or an ISO 8601 time with Z or an offset'],
      ],
    ];
    for (const [operator, values, expected] of cases) {
      expect(problems(propertyFilterSchema, { property_name: 'p', operator, values }), operator).toEqual(
        expected,
      );
    }
  });

  it('rejects unknown operators, nulls and objects as values', () => {
    expect(
      problems(propertyFilterSchema, { property_name: 'p', operator: 'like', values: ['a'] })[0],
    ).toMatch(/^operator: /);
    expect(problems(propertyFilterSchema, { property_name: 'p', values: [null] })[0]).toMatch(
      /^values\[0\]: /,
    );
    expect(problems(propertyFilterSchema, { property_name: 'p' })).toEqual(['values: is required']);
  });

  it('bounds property names and refuses prototype keys', () => {
    expect(problems(propertyFilterSchema, { property_name: '', values: [1] })).toEqual([
      'property_name: must not be empty',
    ]);
    expect(problems(propertyFilterSchema, { property_name: 'x'.repeat(101), values: [1] })).toEqual([
      'property_name: must be at most 100 characters',
    ]);
    expect(problems(propertyFilterSchema, { property_name: 'x'.repeat(100), values: [1] })).toEqual([]);
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      expect(problems(propertyFilterSchema, { property_name: name, values: [1] })).toEqual([
        'property_name: this name is not allowed',
      ]);
    }
  });

  it('refuses unknown fields', () => {
    expect(problems(propertyFilterSchema, { property_name: 'p', values: [1], op: 'eq' })).toEqual([
      'op: unknown field',
    ]);
  });
});

describe('TimeWithin', () => {
  it('accepts the OpenAPI examples', () => {
    expect(
      problems(timeWithinSchema, { start: '2021-01-01T00:00:00Z', end: '2021-01-02T00:00:00Z' }),
    ).toEqual([]);
    expect(
      problems(timeWithinSchema, { period: { number: 1, unit: 'day', tz: 'America/New_York' } }),
    ).toEqual([]);
  });

  it('checks period number, unit and zone', () => {
    const at = (period: unknown) => problems(timeWithinSchema, { period });
    expect(at({ number: 0, unit: 'day', tz: 'UTC' })).toEqual(['period.number: must be greater than 0']);
    expect(at({ number: 1.5, unit: 'day', tz: 'UTC' })).toEqual(['period.number: must be a whole number']);
    expect(at({ number: 100_001, unit: 'day', tz: 'UTC' })).toEqual([
      'period.number: must be at most 100000',
    ]);
    expect(at({ number: 2, unit: 'year', tz: 'UTC' })[0]).toMatch(/^period\.unit: /);
    expect(at({ number: 2, unit: 'week', tz: 'Mars/Olympus' })).toEqual(['period.tz: unknown time zone']);
    expect(at({ number: 2, unit: 'week' })).toEqual(['period.tz: is required']);
  });

  it('checks bounds and their order', () => {
    expect(problems(timeWithinSchema, { start: '2021-01-01T00:00:00' })).toEqual([
      'start: must be an ISO 8601 time with Z or an offset, or a date YYYY-MM-DD',
    ]);
    expect(problems(timeWithinSchema, { start: '2021-01-02', end: '2021-01-01' })).toEqual([
      'chartControls: start must be before end',
    ]);
    expect(problems(timeWithinSchema, { start: '2021-01-01', end: '2021-01-02' })).toEqual([]);
    // period overrides the bounds, so their order no longer matters.
    const period = { number: 1, unit: 'day', tz: 'UTC' };
    expect(problems(timeWithinSchema, { start: '2021-01-02', end: '2021-01-01', period })).toEqual([]);
  });
});

describe('EventFilter and IntentFilter', () => {
  it('apply number_of 1, gte and and', () => {
    expect(eventFilterSchema.parse({ event_name: 'Any Event' })).toEqual({
      event_name: 'Any Event',
      number_of: 1,
      number_of_operator: 'gte',
      combine_previous_operation: 'and',
    });
    expect(intentFilterSchema.parse({ intent: 'Any Intent' })).toEqual({
      intent: 'Any Intent',
      number_of: 1,
      number_of_operator: 'gte',
      combine_previous_operation: 'and',
    });
  });

  it('says a count past 2^53 is too large before it says anything else of it', () => {
    expect(problems(eventFilterSchema, { event_name: 'E', number_of: 1e308 })[0]).toBe(
      'number_of: must be at most 2^53 - 1',
    );
    expect(problems(eventFilterSchema, { event_name: 'E', number_of: 1.5 })).toEqual([
      'number_of: must be a whole number',
    ]);
  });

  it('keeps given values and validates them', () => {
    const given = {
      event_name: 'buy',
      number_of: 3,
      number_of_operator: 'lt',
      combine_previous_operation: 'then',
    };
    expect(eventFilterSchema.parse(given)).toEqual(given);
    expect(problems(eventFilterSchema, { event_name: 'buy', number_of: -1 })).toEqual([
      'number_of: must not be negative',
    ]);
    expect(problems(eventFilterSchema, { event_name: 'buy', number_of_operator: 'neq' })[0]).toMatch(
      /^number_of_operator: /,
    );
    expect(problems(eventFilterSchema, { event_name: '' })).toEqual(['event_name: must not be empty']);
    expect(
      problems(intentFilterSchema, { intent: 'x', groupBy: { property_name: 'a', property_values: [] } }),
    ).toEqual(['groupBy: unknown field']);
  });

  it('reports nested errors with their full path', () => {
    const filter = {
      event_name: 'buy',
      with: [
        { property_name: 'a', values: [1] },
        { property_name: 'b', values: [1, 2] },
      ],
      within: { period: { number: 1, unit: 'day', tz: 'Nowhere' } },
      groupBy: { property_name: 'constructor', property_values: [] },
    };
    expect(problems(eventFilterSchema, filter)).toEqual([
      'with[1].values: operator eq takes exactly one value',
      'within.period.tz: unknown time zone',
      'groupBy.property_name: this name is not allowed',
    ]);
  });
});

describe('UserFilter, GroupByProperty, TraitGroup', () => {
  it('accepts the OpenAPI user filter example and defaults combine to or', () => {
    const example = {
      cohort: 'cohort_name',
      with: [{ property_name: 'trait_name', operator: 'eq', values: ['trait_value'] }],
      shown_intents: [
        {
          intent: 'intent_name',
          with: [{ property_name: 'attribute_name', operator: 'eq', values: ['attribute_value'] }],
          within: { start: '2021-01-01T00:00:00Z', end: '2021-01-02T00:00:00Z' },
        },
      ],
      performed_events: [
        { event_name: 'event_name', within: { start: '2021-01-01T00:00:00Z', end: '2021-01-02T00:00:00Z' } },
      ],
    };
    const parsed = userFilterSchema.parse(example);
    expect(parsed.combine_previous_operation).toBe('or');
    // An unknown cohort is the service's 400, not a shape error.
    expect(parsed.cohort).toBe('cohort_name');
    expect(parsed.shown_intents?.[0]?.number_of).toBe(1);
    expect(parsed.performed_events?.[0]?.number_of_operator).toBe('gte');
    expect(userFilterSchema.parse({})).toEqual({ combine_previous_operation: 'or' });
    expect(problems(userFilterSchema, { combine_previous_operation: 'then' })[0]).toMatch(
      /^combine_previous_operation: /,
    );
  });

  it('checks group-by and trait names', () => {
    expect(problems(groupByPropertySchema, { property_name: 'plan' })).toEqual([
      'property_values: is required',
    ]);
    expect(traitGroupSchema.parse({ trait_name: 'gender', trait_values: ['male', 'female'] })).toEqual({
      trait_name: 'gender',
      trait_values: ['male', 'female'],
    });
    expect(problems(traitGroupSchema, { trait_name: 'prototype' })).toEqual([
      'trait_name: this name is not allowed',
    ]);
  });
});

describe('ChartRange', () => {
  const example = {
    start: '2021-01-01T00:00:00Z',
    end: '2021-01-02T00:00:00Z',
    period: 'day',
    tz: 'America/New_York',
  };

  it('accepts the OpenAPI example and date-only bounds', () => {
    expect(problems(chartRangeSchema, example)).toEqual([]);
    expect(problems(chartRangeSchema, { ...example, start: '2021-01-01', end: '2021-02-01' })).toEqual([]);
  });

  it('names the field for a bad zone, bound or period', () => {
    expect(problems(chartRangeSchema, { ...example, tz: 'Europe/Atlantis' })).toEqual([
      'tz: unknown time zone',
    ]);
    expect(problems(chartRangeSchema, { ...example, start: '01/02/2021' })).toEqual([
      'start: must be an ISO 8601 time with Z or an offset, or a date YYYY-MM-DD',
    ]);
    expect(problems(chartRangeSchema, { ...example, period: 'hour' })[0]).toMatch(/^period: /);
  });

  it('puts order and size problems on the range itself', () => {
    expect(problems(chartRangeSchema, { ...example, end: example.start })).toEqual([
      'chartControls: start must be before end',
    ]);
    const days = { ...example, start: '2020-01-01', end: '2022-09-27', tz: 'UTC' };
    expect(problems(chartRangeSchema, days)).toEqual([]); // exactly 1000 days
    expect(problems(chartRangeSchema, { ...days, end: '2022-09-28' })).toEqual([
      'chartControls: range has 1001 day bins; at most 1000 are allowed',
    ]);
    expect(problems(chartRangeSchemaWith(10), { ...days, end: '2020-01-12' })).toEqual([
      'chartControls: range has 11 day bins; at most 10 are allowed',
    ]);
    expect(problems(chartRangeSchema, { ...days, period: 'week' })).toEqual([]);
  });
});
