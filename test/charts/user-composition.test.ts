import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { seed } from '../helpers/seed.js';
import { freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';

/**
 * User composition by hand, as documentation. Active users are those with any event in the range
 * (the generated Session Started counts too); each is one slice member under its current trait.
 *
 *   alice  plan pro,  country fr   Turn in range
 *   anon   merged into alice        Turn in range        (counts as alice, once)
 *   bob    plan free, country de   Session Started in range
 *   carol  plan pro,  country de   Turn in range, shows intent "billing"
 *   dave   no plan,   country fr   Turn in range
 *   erin   plan free               only an event before the range: not active
 */

let db: Database;
let project: string;
const range = {
  start: '2025-05-01T00:00:00Z',
  end: '2025-05-08T00:00:00Z',
  period: 'week',
  tz: 'Europe/London',
};

beforeAll(async () => {
  db = await openChartDb();
  project = freshProject();
  await seed(db, project, {
    users: [
      { user_id: 'alice', traits: { plan: 'pro', country: 'fr' } },
      { user_id: 'anon', canonical_user_id: 'alice', anonymous: true, traits: { plan: 'free' } },
      { user_id: 'bob', traits: { plan: 'free', country: 'de' } },
      { user_id: 'carol', traits: { plan: 'pro', country: 'de' } },
      { user_id: 'dave', traits: { country: 'fr' } },
      { user_id: 'erin', traits: { plan: 'free' } },
    ],
    events: [
      { event: 'Turn', ts: '2025-05-02T10:00:00Z', user_id: 'alice' },
      { event: 'Turn', ts: '2025-05-03T10:00:00Z', user_id: 'anon' },
      { event: 'Session Started', ts: '2025-05-04T10:00:00Z', user_id: 'bob' },
      { event: 'Turn', ts: '2025-05-05T10:00:00Z', user_id: 'carol' },
      {
        event: 'Intent Informed',
        ts: '2025-05-05T10:01:00Z',
        user_id: 'carol',
        properties: { intent: 'billing' },
      },
      { event: 'Turn', ts: '2025-05-06T10:00:00Z', user_id: 'dave' },
      { event: 'Turn', ts: '2025-04-20T10:00:00Z', user_id: 'erin' },
    ],
  });
});
afterAll(() => db.close());

describe('user composition chart', () => {
  it('splits active persons by a trait, largest first, then the users without it', async () => {
    const chart = await runChart(db, project, 'user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
    });
    expect(withoutDrilldowns(chart)).toEqual({
      chart_name: 'plan',
      slices: [
        { label: 'pro', value: 2, percent: 50 },
        { label: 'free', value: 1, percent: 25 },
        { label: '(none)', value: 1, percent: 25 },
      ],
      highlights: { max_percent: 50, min_percent: 25, max_count: 2, min_count: 1 },
    });
  });

  it('shows listed values in the given order, empty ones included, others left out', async () => {
    const chart = await runChart(db, project, 'user-composition', {
      range,
      selectedTrait: { trait_name: 'plan', trait_values: ['free', 'enterprise', 'pro'] },
    });
    expect(withoutDrilldowns(chart.slices)).toEqual([
      { label: 'free', value: 1, percent: 100 / 3 },
      { label: 'enterprise', value: 0, percent: 0 },
      { label: 'pro', value: 2, percent: 200 / 3 },
    ]);
  });

  it('applies user filters and chart-level shown intents', async () => {
    const de = await runChart(db, project, 'user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
      userFilters: [{ cohort: 'All Users', with: [{ property_name: 'country', values: ['de'] }] }],
    });
    expect(withoutDrilldowns(de.slices)).toEqual([
      { label: 'free', value: 1, percent: 50 },
      { label: 'pro', value: 1, percent: 50 },
    ]);
    const billing = await runChart(db, project, 'user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
      shownIntents: [{ intent: 'Any Intent' }],
    });
    expect(withoutDrilldowns(billing.slices)).toEqual([{ label: 'pro', value: 1, percent: 100 }]);
  });

  it('groups by a second trait', async () => {
    const chart = await runChart(db, project, 'user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
      groupBy: { trait_name: 'country' },
    });
    expect(withoutDrilldowns(chart.groups)).toEqual([
      {
        group: 'de',
        slices: [
          { label: 'free', value: 1, percent: 50 },
          { label: 'pro', value: 1, percent: 50 },
        ],
      },
      {
        group: 'fr',
        slices: [
          { label: 'pro', value: 1, percent: 50 },
          { label: '(none)', value: 1, percent: 50 },
        ],
      },
    ]);
    expect(chart.highlights).toBeUndefined();
  });

  it('drills the (none) slice down to the users without the trait', async () => {
    const chart = await runChart(db, project, 'user-composition', {
      range,
      selectedTrait: { trait_name: 'plan' },
    });
    const none = chart.slices!.find((s) => s.label === '(none)')!;
    const drilled = await retrieve(db, project, none.drilldown_id!);
    expect(drilled.rows).toEqual([{ user_id: 'dave', id: 'dave', traits: { country: 'fr' } }]);
  });
});
