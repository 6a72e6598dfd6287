import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CHART_KINDS, type ChartKind, chartControlsSchemas, parseChartControls } from './chart-controls.js';

const range = {
  start: '2021-01-01T00:00:00Z',
  end: '2021-01-02T00:00:00Z',
  period: 'day',
  tz: 'America/New_York',
};

function problems(kind: ChartKind, raw: unknown, maxBins?: number): string[] {
  const result = parseChartControls(kind, raw, maxBins === undefined ? {} : { maxBins });
  return result.ok ? [] : result.issues.map((i) => `${i.path}: ${i.message}`);
}

describe('segmentation chartControls', () => {
  it('parses a full request and applies every default', () => {
    const result = parseChartControls('segmentation', {
      range,
      eventFilters: [
        {
          event_name: 'Any Event',
          with: [{ property_name: 'plan', values: ['pro'] }],
          groupBy: { property_name: 'country', property_values: [] },
        },
      ],
      userFilters: [{ cohort: 'All Users', performed_events: [{ event_name: 'signup' }] }],
      shownIntents: [{ intent: 'Any Intent' }],
    });
    expect(result).toEqual({
      ok: true,
      value: {
        range,
        eventFilters: [
          {
            event_name: 'Any Event',
            with: [{ property_name: 'plan', operator: 'eq', values: ['pro'] }],
            groupBy: { property_name: 'country', property_values: [] },
            number_of: 1,
            number_of_operator: 'gte',
            combine_previous_operation: 'and',
          },
        ],
        userFilters: [
          {
            cohort: 'All Users',
            performed_events: [
              {
                event_name: 'signup',
                number_of: 1,
                number_of_operator: 'gte',
                combine_previous_operation: 'and',
              },
            ],
            combine_previous_operation: 'or',
          },
        ],
        shownIntents: [
          {
            intent: 'Any Intent',
            number_of: 1,
            number_of_operator: 'gte',
            combine_previous_operation: 'and',
          },
        ],
      },
    });
  });

  it('names the JSON path of every problem', () => {
    const raw = {
      range: { ...range, tz: 'America/Gotham' },
      eventFilters: [
        {
          event_name: 'buy',
          with: [
            { property_name: 'a', values: [1] },
            { property_name: 'b', values: ['x', 'y'] },
          ],
        },
      ],
      userFilters: [{ with: [{ property_name: '__proto__', values: [1] }] }],
    };
    expect(problems('segmentation', raw)).toEqual([
      'range.tz: unknown time zone',
      'eventFilters[0].with[1].values: operator eq takes exactly one value',
      'userFilters[0].with[0].property_name: this name is not allowed',
    ]);
  });

  it('requires range and at least one event filter', () => {
    expect(problems('segmentation', {})).toEqual(['range: is required', 'eventFilters: is required']);
    expect(problems('segmentation', { range, eventFilters: [] })).toEqual([
      'eventFilters: at least one event filter is required',
    ]);
    expect(problems('segmentation', undefined)).toEqual(['chartControls: is required']);
    expect(problems('segmentation', 'range')[0]).toMatch(/^chartControls: /);
  });

  it('reports range order and bin count on range', () => {
    const eventFilters = [{ event_name: 'x' }];
    expect(problems('segmentation', { range: { ...range, start: range.end }, eventFilters })).toEqual([
      'range: start must be before end',
    ]);
    const long = { ...range, start: '2020-01-01', end: '2023-01-01' };
    expect(problems('segmentation', { range: long, eventFilters })).toEqual([
      'range: range has 1096 day bins; at most 1000 are allowed',
    ]);
    expect(problems('segmentation', { range: { ...long, period: 'week' }, eventFilters })).toEqual([]);
    // ISO 2020-W01 to 2022-W52: 53 + 52 + 52 weeks (checked with Python's isocalendar).
    expect(problems('segmentation', { range: { ...long, period: 'week' }, eventFilters }, 100)).toEqual([
      'range: range has 157 week bins; at most 100 are allowed',
    ]);
  });

  it('refuses unknown and prototype keys, each on its own path', () => {
    const raw = JSON.parse(
      '{"range":{"start":"2021-01-01","end":"2021-01-02","period":"day","tz":"UTC","zone":"x"},' +
        '"eventFilters":[{"event_name":"x","__proto__":{"polluted":true}}],"userFilter":[]}',
    );
    expect(problems('segmentation', raw)).toEqual([
      'range.zone: unknown field',
      'eventFilters[0].__proto__: key "__proto__" is not allowed',
      'userFilter: unknown field',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('retention chartControls', () => {
  it('parses with startingEvent defaults and the OpenAPI groupBy example', () => {
    const result = parseChartControls('retention', {
      range,
      startingEvent: { event_name: 'signup' },
      returnEvents: [{ event_name: 'buy', combine_previous_operation: 'or' }],
      groupBy: { trait_name: 'gender', trait_values: ['male', 'female'] },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.startingEvent).toEqual({
      event_name: 'signup',
      number_of: 1,
      number_of_operator: 'gte',
      combine_previous_operation: 'and',
    });
    expect(result.value.returnEvents?.[0]?.combine_previous_operation).toBe('or');
    expect(result.value.groupBy?.trait_values).toEqual(['male', 'female']);
  });

  it('requires startingEvent and checks the trait group', () => {
    expect(problems('retention', { range })).toEqual(['startingEvent: is required']);
    expect(
      problems('retention', { range, startingEvent: { event_name: 'x' }, groupBy: { trait_name: '' } }),
    ).toEqual(['groupBy.trait_name: must not be empty']);
    expect(problems('retention', { range, startingEvent: { event_name: 'x' }, eventFilters: [] })).toEqual([
      'eventFilters: unknown field',
    ]);
  });
});

describe('session chartControls', () => {
  it('needs only a range', () => {
    expect(parseChartControls('session', { range })).toEqual({ ok: true, value: { range } });
  });

  it('validates optional filters', () => {
    const raw = {
      range,
      eventFilters: [{ event_name: 'turn', number_of: 2.5 }],
      shownIntents: [
        { intent: 'refund', with: [{ property_name: 'amount', operator: 'between', values: [10] }] },
      ],
    };
    expect(problems('session', raw)).toEqual([
      'eventFilters[0].number_of: must be a whole number',
      'shownIntents[0].with[0].values: operator between takes exactly two values',
    ]);
  });
});

describe('user-composition chartControls', () => {
  it('parses the OpenAPI selectedTrait example with user filters', () => {
    const result = parseChartControls('user-composition', {
      range,
      selectedTrait: { trait_name: 'gender', trait_values: ['male', 'female'] },
      userFilters: [{ cohort: 'Power users' }],
    });
    expect(result.ok && result.value.userFilters).toEqual([
      { cohort: 'Power users', combine_previous_operation: 'or' },
    ]);
  });

  it('requires selectedTrait', () => {
    expect(problems('user-composition', { range })).toEqual(['selectedTrait: is required']);
  });
});

describe('chartControlsSchemas', () => {
  it('has one schema per kind', () => {
    expect(Object.keys(chartControlsSchemas).sort()).toEqual([...CHART_KINDS].sort());
  });
});

describe('JSON Schema for the OpenAPI document', () => {
  it('generates for every kind, with defaulted fields optional on input', () => {
    for (const schema of Object.values(chartControlsSchemas))
      expect(() => z.toJSONSchema(schema, { io: 'input' })).not.toThrow();
    const json = JSON.stringify(z.toJSONSchema(chartControlsSchemas.segmentation, { io: 'input' }));
    expect(json).toContain('"required":["property_name","values"]');
    expect(json).toContain('"required":["event_name"]');
    expect(json).toContain('start of that day in range.tz');
  });
});
