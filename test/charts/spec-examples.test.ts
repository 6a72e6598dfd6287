import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed } from '../helpers/seed.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The examples of the spec's "Chart filter types" and of the hosted OpenAPI's chart parameters,
 * sent through the routes as written (names like `event_name`, `trait_value` included), over data
 * that makes each one select something. The OpenAPI range example is one UTC day seen from New
 * York, so it spans two local bins: 31 Dec from 19:00 and 1 Jan until 19:00.
 */

let t: TestService;
const range = {
  start: '2021-01-01T00:00:00Z',
  end: '2021-01-02T00:00:00Z',
  period: 'day',
  tz: 'America/New_York',
};
const within = { start: '2021-01-01T00:00:00Z', end: '2021-01-02T00:00:00Z' };
const attribute = { property_name: 'attribute_name', operator: 'eq', values: ['attribute_value'] };
const intentExample = { intent: 'intent_name', with: [attribute], within };
const userFilterExample = {
  cohort: 'cohort_name',
  with: [{ property_name: 'trait_name', operator: 'eq', values: ['trait_value'] }],
  shown_intents: [intentExample],
  performed_events: [{ event_name: 'event_name', within }],
};
const allUsers = { ...userFilterExample, cohort: 'All Users' };
const genders = { trait_name: 'gender', trait_values: ['male', 'female'] };

beforeAll(async () => {
  t = await startTestService(undefined, { limits: { chartRatePerSecond: 10_000, chartBurst: 10_000 } });
  await seed(t.service.db, t.projectId, {
    users: [
      { user_id: 'u1', traits: { trait_name: 'trait_value', gender: 'female' } },
      { user_id: 'u2', traits: { trait_name: 'other', gender: 'male' } },
    ],
    sessions: [
      { session_id: 's1', user_id: 'u1', started_at: '2021-01-01T01:00:00Z' },
      { session_id: 's2', user_id: 'u2', started_at: '2021-01-01T12:00:00Z' },
    ],
    events: [
      {
        event: 'event_name',
        ts: '2021-01-01T01:00:00Z',
        user_id: 'u1',
        session_id: 's1',
        properties: { attribute_name: 'attribute_value', n: 5 },
      },
      {
        event: 'event_name',
        ts: '2021-01-01T12:00:00Z',
        user_id: 'u2',
        session_id: 's2',
        properties: { n: 10 },
      },
      {
        event: 'Intent Informed',
        ts: '2021-01-01T12:30:00Z',
        user_id: 'u1',
        session_id: 's1',
        properties: { intent: 'intent_name', attribute_name: 'attribute_value' },
      },
      { event: 'Other', ts: '2021-01-01T13:00:00Z', user_id: 'u2', session_id: 's2' },
    ],
  });
});
afterAll(() => t.stop());

async function chart(kind: string, controls: unknown): Promise<{ status: number; json: unknown }> {
  return t.get(`/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}`);
}

/** Segmentation totals per bin of one event filter plus chart-level extras. */
async function totals(filter: object, extra: object = {}): Promise<number[]> {
  const res = await chart('segmentation', {
    range,
    eventFilters: [{ event_name: 'event_name', ...filter }],
    ...extra,
  });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return (res.json as Array<{ points: Array<{ total: number }> }>)[0]!.points.map((p) => p.total);
}

describe('spec filter examples through the routes', () => {
  it('ChartRange example: two New York bins', async () => {
    expect(await totals({})).toEqual([1, 1]);
  });

  it('PropertyFilter: each of the thirteen operators', async () => {
    const cases: Array<[string, string, unknown[], number[]]> = [
      ['n', 'eq', [5], [1, 0]],
      ['n', 'neq', [5], [0, 1]],
      ['n', 'in', [5, 10], [1, 1]],
      ['n', 'nin', [5], [0, 1]],
      ['attribute_name', 'case_insensitive_eq', ['ATTRIBUTE_VALUE'], [1, 0]],
      ['attribute_name', 'case_insensitive_neq', ['ATTRIBUTE_VALUE'], [0, 1]],
      ['attribute_name', 'regex', ['^attr'], [1, 0]],
      ['attribute_name', 'not_regex', ['^attr'], [0, 1]],
      ['n', 'between', [5, 10], [1, 1]],
      ['n', 'gt', [5], [0, 1]],
      ['n', 'gte', [5], [1, 1]],
      ['n', 'lt', [10], [1, 0]],
      ['n', 'lte', [10], [1, 1]],
    ];
    for (const [property_name, operator, values, expected] of cases) {
      expect(await totals({ with: [{ property_name, operator, values }] }), operator).toEqual(expected);
    }
    // operator defaults to eq; the OpenAPI example filter.
    expect(await totals({ with: [{ property_name: 'n', values: [10] }] })).toEqual([0, 1]);
    expect(await totals({ with: [attribute] })).toEqual([1, 0]);
  });

  it('EventFilter: Any Event, within (start/end and period), number_of, groupBy', async () => {
    expect(await totals({ event_name: 'Any Event' })).toEqual([1, 3]);
    expect(await totals({ within })).toEqual([1, 1]);
    expect(await totals({ within: { period: { number: 1, unit: 'day', tz: 'America/New_York' } } })).toEqual([
      1, 1,
    ]);
    expect(await totals({ number_of: 1, number_of_operator: 'eq' })).toEqual([1, 1]);
    expect(await totals({ number_of: 1, number_of_operator: 'gt' })).toEqual([0, 0]);
    const grouped = await chart('segmentation', {
      range,
      eventFilters: [
        {
          event_name: 'Any Event',
          groupBy: { property_name: 'gender', property_values: ['male', 'female'] },
        },
      ],
    });
    const groups = (
      grouped.json as Array<{ groups: Array<{ group: string; points: Array<{ total: number }> }> }>
    )[0]!.groups;
    expect(groups.map((g) => [g.group, g.points.map((p) => p.total)])).toEqual([
      ['male', [0, 2]],
      ['female', [1, 1]],
    ]);
  });

  it('UserFilter example: the cohort name is refused until cohorts exist, All Users works', async () => {
    const refused = await chart('segmentation', {
      range,
      eventFilters: [{ event_name: 'event_name' }],
      userFilters: [userFilterExample],
    });
    expect(refused).toMatchObject({ status: 400, json: { issues: [{ path: 'userFilters[0].cohort' }] } });
    expect(await totals({}, { userFilters: [allUsers] })).toEqual([1, 0]);
  });

  it('performed_events combine with and / or / then', async () => {
    const users = (performed: object[]) => totals({}, { userFilters: [{ performed_events: performed }] });
    expect(
      await users([{ event_name: 'event_name' }, { event_name: 'Other', combine_previous_operation: 'and' }]),
    ).toEqual([0, 1]);
    expect(
      await users([
        { event_name: 'Other' },
        { event_name: 'Intent Informed', combine_previous_operation: 'or' },
      ]),
    ).toEqual([1, 1]);
    // u1's intent (12:30) comes after their event_name (01:00); u2 shows no intent.
    expect(
      await users([
        { event_name: 'event_name' },
        { event_name: 'Intent Informed', combine_previous_operation: 'then' },
      ]),
    ).toEqual([1, 0]);
    expect(
      await users([
        { event_name: 'Intent Informed' },
        { event_name: 'event_name', combine_previous_operation: 'then' },
      ]),
    ).toEqual([0, 0]);
  });

  it('IntentFilter example and Any Intent at chart level (shownIntents)', async () => {
    expect(await totals({}, { shownIntents: [intentExample] })).toEqual([1, 0]);
    expect(await totals({}, { shownIntents: [{ intent: 'Any Intent' }] })).toEqual([1, 0]);
    expect(await totals({}, { shownIntents: [{ intent: 'other_intent' }] })).toEqual([0, 0]);
  });

  it('TraitGroup example as retention and session groupBy, and as composition selectedTrait', async () => {
    const ret = await chart('retention', {
      range,
      startingEvent: { event_name: 'Any Event' },
      groupBy: genders,
    });
    expect(
      (ret.json as Array<{ chart_name: string; row_headers: number[] }>).map((r) => [
        r.chart_name,
        r.row_headers,
      ]),
    ).toEqual([
      ['gender = male', [0, 1]],
      ['gender = female', [1, 0]],
    ]);
    const ses = await chart('session', {
      range,
      groupBy: genders,
      userFilters: [allUsers],
      shownIntents: [intentExample],
    });
    const sesGroups = (ses.json as { groups: Array<{ group: string; points: Array<{ sessions: number }> }> })
      .groups;
    expect(sesGroups.map((g) => [g.group, g.points.map((p) => p.sessions)])).toEqual([
      ['male', [0, 0]],
      ['female', [1, 0]],
    ]);
    const comp = await chart('user-composition', { range, selectedTrait: genders, userFilters: [allUsers] });
    expect(comp.json).toMatchObject({
      chart_name: 'gender',
      slices: [
        { label: 'male', value: 0, percent: 0 },
        { label: 'female', value: 1, percent: 100 },
      ],
    });
  });
});
