import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { seed } from '../helpers/seed.js';
import { freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';

/**
 * Segmentation by hand, as documentation. New York, 8–10 March 2025: the 9th is the 23-hour day on
 * which clocks spring forward, so its bin runs 00:00-05:00 → 00:00-04:00. An anonymous device user
 * was merged into alice; its events count as hers.
 */

let db: Database;
let project: string;
const range = { start: '2025-03-08', end: '2025-03-11', period: 'day', tz: 'America/New_York' };

beforeAll(async () => {
  db = await openChartDb();
  project = freshProject();
  await seed(db, project, {
    users: [
      { user_id: 'alice', traits: { plan: 'pro' } },
      { user_id: 'bob', traits: { plan: 'free' } },
      { user_id: 'anon', canonical_user_id: 'alice', anonymous: true, traits: { plan: 'trial' } },
    ],
    events: [
      {
        event: 'Turn',
        ts: '2025-03-08T12:00:00-05:00',
        user_id: 'alice',
        properties: { model: 'gpt', tokens: 10 },
      },
      {
        event: 'Turn',
        ts: '2025-03-08T20:00:00-05:00',
        user_id: 'anon',
        properties: { model: 'Claude', tokens: 5 },
      },
      { event: 'Turn', ts: '2025-03-09T04:30:00Z', user_id: 'bob', properties: { model: 'gpt', tokens: 50 } },
      // Exactly midnight belongs to the new day; 1 ms before the next midnight still to this one.
      {
        event: 'Turn',
        ts: '2025-03-09T05:00:00Z',
        user_id: 'bob',
        properties: { model: 'gpt', plan: 'pro' },
      },
      { event: 'Turn', ts: '2025-03-10T03:59:59.999Z', user_id: 'alice', properties: { model: 'claude' } },
      { event: 'Turn', ts: '2025-03-10T04:00:00Z', user_id: 'alice' },
      // range.end is exclusive.
      { event: 'Turn', ts: '2025-03-11T04:00:00Z', user_id: 'bob', properties: { model: 'gpt' } },
      { event: 'Page', ts: '2025-03-09T15:00:00Z', user_id: 'bob' },
    ],
  });
});
afterAll(() => db.close());

const BINS = [
  { start: '2025-03-08T00:00:00-05:00', end: '2025-03-09T00:00:00-05:00' },
  { start: '2025-03-09T00:00:00-05:00', end: '2025-03-10T00:00:00-04:00' },
  { start: '2025-03-10T00:00:00-04:00', end: '2025-03-11T00:00:00-04:00' },
];
const points = (rows: Array<[number, number]>) =>
  rows.map(([total, unique], i) => ({
    ...BINS[i],
    total,
    unique,
    average: unique === 0 ? 0 : total / unique,
  }));

describe('segmentation chart', () => {
  it('counts events and distinct persons per local day, merged users once', async () => {
    const [turns] = await runChart(db, project, 'segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn' }],
    });
    // 8th: alice, anon (= alice) and bob at 23:30 local → 3 events, 2 persons.
    expect(withoutDrilldowns(turns)).toEqual({
      event_name: 'Turn',
      points: points([
        [3, 2],
        [2, 2],
        [1, 1],
      ]),
      highlights: { average_events: 2, average_unique_users: 5 / 3 },
    });
  });

  it('groups by a property, most events first, with events without it last as (none)', async () => {
    const [byModel] = await runChart(db, project, 'segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn', groupBy: { property_name: 'model', property_values: [] } }],
    });
    expect(withoutDrilldowns(byModel?.groups)).toEqual([
      {
        group: 'gpt',
        points: points([
          [2, 2],
          [1, 1],
          [0, 0],
        ]),
      },
      {
        group: 'Claude',
        points: points([
          [1, 1],
          [0, 0],
          [0, 0],
        ]),
      },
      {
        group: 'claude',
        points: points([
          [0, 0],
          [1, 1],
          [0, 0],
        ]),
      },
      {
        group: '(none)',
        points: points([
          [0, 0],
          [0, 0],
          [1, 1],
        ]),
      },
    ]);
    const none = byModel?.groups?.[3]?.points[2]?.drilldown_id;
    const drilled = await retrieve(db, project, none!);
    expect(drilled.kind === 'users' && drilled.rows.map((r) => r.user_id)).toEqual(['alice']);
  });

  it('looks a filter name up in the event first, then in the person’s traits', async () => {
    // bob's midnight turn says plan=pro itself; alice's turns inherit plan=pro from her traits.
    const [pro] = await runChart(db, project, 'segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn', with: [{ property_name: 'plan', values: ['pro'] }] }],
    });
    expect(withoutDrilldowns(pro?.points)).toEqual(
      points([
        [2, 1],
        [2, 2],
        [1, 1],
      ]),
    );
  });

  it('applies operators in the database: case-insensitive, regex, numeric between, missing values', async () => {
    const run = async (filter: object) => {
      const [r] = await runChart(db, project, 'segmentation', {
        range,
        eventFilters: [{ event_name: 'Turn', with: [filter] }],
      });
      return r!.points!.map((p) => p.total);
    };
    expect(
      await run({ property_name: 'model', operator: 'case_insensitive_eq', values: ['CLAUDE'] }),
    ).toEqual([1, 1, 0]);
    expect(await run({ property_name: 'model', operator: 'regex', values: ['^[Cc]la'] })).toEqual([1, 1, 0]);
    expect(await run({ property_name: 'tokens', operator: 'between', values: [5, 10] })).toEqual([2, 0, 0]);
    // A missing property matches only negative operators: the last turn has no model at all.
    expect(await run({ property_name: 'model', operator: 'neq', values: ['gpt'] })).toEqual([1, 1, 1]);
    expect(await run({ property_name: 'model', operator: 'not_regex', values: ['.'] })).toEqual([0, 0, 1]);
  });

  it('keeps only persons whose count in the window satisfies number_of', async () => {
    // alice has 4 turns in the range, bob 2: "more than 2" keeps alice's events only.
    const [busy] = await runChart(db, project, 'segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn', number_of: 2, number_of_operator: 'gt' }],
    });
    expect(withoutDrilldowns(busy?.points)).toEqual(
      points([
        [2, 1],
        [1, 1],
        [1, 1],
      ]),
    );
  });

  it('drills a point down to its users, the merged anonymous user as alice', async () => {
    const [turns] = await runChart(db, project, 'segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn' }],
    });
    const drilled = await retrieve(db, project, turns!.points![0]!.drilldown_id!);
    expect(drilled).toEqual({
      kind: 'users',
      total: 2,
      truncated: false,
      rows: [
        { user_id: 'alice', id: 'alice', traits: { plan: 'pro' } },
        { user_id: 'bob', id: 'bob', traits: { plan: 'free' } },
      ],
    });
  });

  it('answers every bin with zeros for an empty project', async () => {
    const [empty] = await runChart(db, freshProject(), 'segmentation', {
      range,
      eventFilters: [{ event_name: 'Turn' }],
    });
    expect(withoutDrilldowns(empty?.points)).toEqual(
      points([
        [0, 0],
        [0, 0],
        [0, 0],
      ]),
    );
    expect(empty?.highlights).toEqual({ average_events: 0, average_unique_users: 0 });
  });
});
