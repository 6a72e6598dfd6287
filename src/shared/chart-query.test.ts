import { describe, expect, it } from 'vitest';
import { controlsFromQuery, parseChartControlsQuery, type QueryRecord } from './chart-query.js';

const range = { start: '2025-03-01', end: '2025-04-01', period: 'week', tz: 'America/New_York' };

function problems(query: QueryRecord): string[] {
  const result = controlsFromQuery(query);
  return result.ok ? [] : result.issues.map((i) => `${i.path}: ${i.message}`);
}

describe('controlsFromQuery, JSON form', () => {
  it('decodes compact JSON exactly, without coercion', () => {
    const controls = {
      range,
      eventFilters: [{ event_name: 'x', with: [{ property_name: 'z', values: ['5'] }] }],
    };
    expect(controlsFromQuery({ chartControls: JSON.stringify(controls), app_id: 'p' })).toEqual({
      ok: true,
      value: controls,
    });
  });

  it('reports invalid JSON, repetition and absence on chartControls', () => {
    expect(problems({ chartControls: '{"range":' })).toEqual(['chartControls: not valid JSON']);
    expect(problems({ chartControls: ['{}', '{}'] })).toEqual(['chartControls: given more than once']);
    expect(problems({ app_id: 'p' })).toEqual(['chartControls: is required']);
    expect(problems({ chartControls: '{}', 'chartControls[range][tz]': 'UTC' })).toEqual([
      'chartControls: give it as JSON or as bracket keys, not both',
    ]);
  });
});

describe('controlsFromQuery, bracket form', () => {
  it('builds nested objects and arrays and coerces typed fields', () => {
    const query: QueryRecord = {
      'chartControls[range][start]': '2025-03-01',
      'chartControls[range][end]': '2025-04-01',
      'chartControls[range][period]': 'week',
      'chartControls[range][tz]': 'America/New_York',
      'chartControls[eventFilters][0][event_name]': 'buy',
      'chartControls[eventFilters][0][number_of]': '3',
      'chartControls[eventFilters][0][with][0][property_name]': 'amount',
      'chartControls[eventFilters][0][with][0][operator]': 'between',
      'chartControls[eventFilters][0][with][0][values][0]': '10',
      'chartControls[eventFilters][0][with][0][values][1]': '20.5',
      'chartControls[eventFilters][0][with][1][property_name]': 'zip',
      'chartControls[eventFilters][0][with][1][values]': '02139',
      'chartControls[eventFilters][1][event_name]': 'Any Event',
      'chartControls[eventFilters][1][within][period][number]': '7',
      'chartControls[eventFilters][1][within][period][unit]': 'day',
      'chartControls[eventFilters][1][within][period][tz]': 'UTC',
      'chartControls[eventFilters][1][with][0][property_name]': 'vip',
      'chartControls[eventFilters][1][with][0][operator]': 'in',
      'chartControls[eventFilters][1][with][0][values][]': ['true', 'gold'],
      session_id: 'ignored',
    };
    expect(controlsFromQuery(query)).toEqual({
      ok: true,
      value: {
        range,
        eventFilters: [
          {
            event_name: 'buy',
            number_of: 3,
            with: [
              { property_name: 'amount', operator: 'between', values: [10, 20.5] },
              // Leading zeros do not round-trip as a number, so the string survives.
              { property_name: 'zip', values: ['02139'] },
            ],
          },
          {
            event_name: 'Any Event',
            within: { period: { number: 7, unit: 'day', tz: 'UTC' } },
            with: [{ property_name: 'vip', operator: 'in', values: [true, 'gold'] }],
          },
        ],
      },
    });
  });

  it('treats a repeated key as a list and [] as a list of one', () => {
    const result = controlsFromQuery({
      'chartControls[selectedTrait][trait_name]': 'plan',
      'chartControls[selectedTrait][trait_values][]': 'pro',
      'chartControls[groupBy][trait_name]': ['a', 'b'],
    });
    expect(result).toEqual({
      ok: true,
      value: {
        selectedTrait: { trait_name: 'plan', trait_values: ['pro'] },
        groupBy: { trait_name: ['a', 'b'] },
      },
    });
  });

  it('leaves strings alone where the schema wants strings', () => {
    const result = controlsFromQuery({ 'chartControls[eventFilters][0][event_name]': '42' });
    expect(result).toEqual({ ok: true, value: { eventFilters: [{ event_name: '42' }] } });
  });

  it('keeps as text the values of an operator that matches text (a regex of digits stays a regex)', () => {
    const filter = (operator: string) =>
      controlsFromQuery({
        'chartControls[eventFilters][0][event_name]': 'Start',
        'chartControls[eventFilters][0][with][0][property_name]': 'code',
        'chartControls[eventFilters][0][with][0][operator]': operator,
        'chartControls[eventFilters][0][with][0][values][0]': '404',
      });
    for (const op of ['regex', 'not_regex', 'case_insensitive_eq', 'case_insensitive_neq']) {
      expect(filter(op)).toMatchObject({
        ok: true,
        value: { eventFilters: [{ with: [{ values: ['404'] }] }] },
      });
    }
    expect(filter('eq')).toMatchObject({
      ok: true,
      value: { eventFilters: [{ with: [{ values: [404] }] }] },
    });
  });

  it('names the place of each structural problem', () => {
    expect(
      problems({
        'chartControls[eventFilters][0][event_name]': 'a',
        'chartControls[eventFilters][2][event_name]': 'b',
      }),
    ).toEqual(['eventFilters: array indices must run 0, 1, 2, ... without gaps']);
    expect(problems({ 'chartControls[range]': 'x', 'chartControls[range][tz]': 'UTC' })).toEqual([
      'range: given both as a value and as an object',
    ]);
    expect(problems({ 'chartControls[range][tz]': 'UTC', 'chartControls[range]': 'x' })).toEqual([
      'range: given both as a value and as an object',
    ]);
    expect(problems({ 'chartControls[a][values]': '1', 'chartControls[a][values][]': '2' })).toEqual([
      'a.values: given more than once',
    ]);
    expect(problems({ 'chartControls[range][__proto__][x]': '1' })).toEqual([
      'range.__proto__: key "__proto__" is not allowed',
    ]);
    expect(problems({ 'chartControls[range': '1' })).toEqual([
      'chartControls: malformed query key "chartControls[range"',
    ]);
    expect(problems({ 'chartControls[][x]': '1' })).toEqual([
      'chartControls: malformed query key "chartControls[][x]"',
    ]);
    expect(problems({ [`chartControls${'[a]'.repeat(13)}`]: '1' })[0]).toMatch(/nested too deeply$/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('parseChartControlsQuery', () => {
  it('validates bracket input with the same paths and defaults as JSON', () => {
    const base = {
      'chartControls[range][start]': '2025-03-01',
      'chartControls[range][end]': '2025-04-01',
      'chartControls[range][period]': 'week',
      'chartControls[range][tz]': 'America/New_York',
      'chartControls[startingEvent][event_name]': 'signup',
    };
    const ok = parseChartControlsQuery('retention', base);
    expect(ok.ok && ok.value.startingEvent).toEqual({
      event_name: 'signup',
      number_of: 1,
      number_of_operator: 'gte',
      combine_previous_operation: 'and',
    });
    const bad = parseChartControlsQuery('retention', {
      ...base,
      'chartControls[range][tz]': 'Mars/Base',
      'chartControls[startingEvent][number_of]': 'many',
    });
    expect(bad.ok ? [] : bad.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'range.tz: unknown time zone',
      'startingEvent.number_of: Invalid input: expected number, received string',
    ]);
  });

  it('passes query-level problems through', () => {
    expect(parseChartControlsQuery('session', { chartControls: 'nope' })).toEqual({
      ok: false,
      issues: [{ path: 'chartControls', message: 'not valid JSON' }],
    });
  });
});
