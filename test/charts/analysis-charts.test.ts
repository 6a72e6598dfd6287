import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { CONVERSATION_ANALYSES, INTENT_ANALYSES } from '../../src/shared/analysis-controls.js';
import { type SeedData, seed } from '../helpers/seed.js';
import { controlsOf, freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';

/**
 * The five charts of the hosted OpenAPI beyond spec 4.1 on a small hand-made project whose answers
 * are worked out by hand below (analysis-controls.ts has the rules). Two days in UTC:
 * - u1 (plan pro, team red; u2 has no team): conversation c1 in s1 on day 1, intents billing + refund, 3 turns, 60 s,
 *   positive; then on day 2 c2 in s1, intent billing, 1 turn, 10 s, 1 function error, negative.
 * - u2 (plan free): conversation c1 in s2 (the same conversation id in another session: its own
 *   conversation), intent refund with attribute order_id, 2 turns, 30 s, neutral, on day 1; and
 *   c3 in s2 without intents, 1 turn, 5 s, neutral, on day 2.
 */

const R = { start: '2025-01-06', end: '2025-01-08', period: 'day', tz: 'UTC' } as const;

function summary(ts: string, user: string, session: string, conv: string, p: Record<string, unknown>) {
  return {
    event: 'Conversation Summary',
    ts,
    user_id: user,
    session_id: session,
    conversation_id: conv,
    properties: p as Record<string, never>,
  };
}
function intent(ts: string, user: string, session: string, conv: string, name: string, extra = {}) {
  return {
    event: 'Intent Informed',
    ts,
    user_id: user,
    session_id: session,
    conversation_id: conv,
    properties: { intent: name, source: 'label', ...extra },
  };
}
function turn(ts: string, user: string, session: string, conv: string) {
  return { event: 'Turn', ts, user_id: user, session_id: session, conversation_id: conv, properties: {} };
}

const DATA: SeedData = {
  users: [
    { user_id: 'u1', traits: { plan: 'pro', team: 'red' } },
    { user_id: 'u2', traits: { plan: 'free' } },
  ],
  events: [
    turn('2025-01-06T09:00:00Z', 'u1', 's1', 'c1'),
    turn('2025-01-06T09:05:00Z', 'u1', 's1', 'c1'),
    { event: 'Purchase', ts: '2025-01-06T09:10:00Z', user_id: 'u1', session_id: 's1', properties: {} },
    summary('2025-01-06T09:20:00Z', 'u1', 's1', 'c1', {
      turns: 3,
      duration_s: 60,
      function_errors: 0,
      intents: ['billing', 'refund'],
      sentiment: 'positive',
    }),
    intent('2025-01-06T09:20:00Z', 'u1', 's1', 'c1', 'billing'),
    intent('2025-01-06T09:20:00Z', 'u1', 's1', 'c1', 'refund'),
    summary('2025-01-07T10:00:00Z', 'u1', 's1', 'c2', {
      turns: 1,
      duration_s: 10,
      function_errors: 1,
      intents: ['billing'],
      sentiment: 'negative',
    }),
    intent('2025-01-07T10:00:00Z', 'u1', 's1', 'c2', 'billing'),
    turn('2025-01-06T12:00:00Z', 'u2', 's2', 'c1'),
    summary('2025-01-06T12:30:00Z', 'u2', 's2', 'c1', {
      turns: 2,
      duration_s: 30,
      function_errors: 0,
      intents: ['refund'],
      sentiment: 'neutral',
    }),
    intent('2025-01-06T12:30:00Z', 'u2', 's2', 'c1', 'refund', { order_id: 'A1' }),
    // u2's purchase comes before their turn: not a funnel conversion (steps are ordered).
    { event: 'Purchase', ts: '2025-01-06T11:00:00Z', user_id: 'u2', session_id: 's2', properties: {} },
    summary('2025-01-07T12:00:00Z', 'u2', 's2', 'c3', {
      turns: 1,
      duration_s: 5,
      function_errors: 0,
      intents: [],
      sentiment: 'neutral',
    }),
  ],
};

let db: Database;
let project: string;
beforeAll(async () => {
  db = await openChartDb();
  project = freshProject();
  await seed(db, project, DATA);
});
afterAll(() => db.close());

describe('funnel-chart', () => {
  it('counts persons reaching each ordered step, first touch', async () => {
    const chart = await runChart(db, project, 'funnel', {
      range: R,
      eventFilters: [{ event_name: 'Turn' }, { event_name: 'Purchase' }],
    });
    expect(withoutDrilldowns(chart)).toEqual({
      chart_name: 'Funnel',
      events: [
        { event: 'Turn', count: 2, percent: 100 },
        { event: 'Purchase', count: 1, percent: 50 },
      ],
      highlights: { number_of_users: 2, conversion_rate: 50 },
    });
    const drilled = await retrieve(db, project, chart.events![1]!.drilldown_id!);
    expect(drilled.kind === 'users' && drilled.rows.map((r) => r.user_id)).toEqual(['u1']);
  });

  it('a conversion window shorter than the gap drops the conversion; groupBy splits by trait', async () => {
    const short = await runChart(db, project, 'funnel', {
      range: R,
      eventFilters: [{ event_name: 'Turn' }, { event_name: 'Purchase' }],
      conversionWindow: { number: 1, unit: 'hour' },
      groupBy: { trait_name: 'plan' },
    });
    expect(withoutDrilldowns(short).groups).toEqual([
      {
        group: 'free',
        events: [
          { event: 'Turn', count: 1, percent: 100 },
          { event: 'Purchase', count: 0, percent: 0 },
        ],
      },
      {
        group: 'pro',
        events: [
          { event: 'Turn', count: 1, percent: 100 },
          { event: 'Purchase', count: 1, percent: 100 },
        ],
      },
    ]);
  });
});

describe('intent-distribution-chart', () => {
  it('counts conversations as (session_id, conversation_id) pairs per intent', async () => {
    const chart = await runChart(db, project, 'intent-distribution', { range: R });
    expect(withoutDrilldowns(chart)).toEqual({
      chart_name: 'Intents',
      slices: [
        { label: 'billing', value: 2, percent: 50 },
        { label: 'refund', value: 2, percent: 50 },
      ],
      highlights: { max_percent: 50, min_percent: 50, max_count: 2, min_count: 2 },
    });
    const drilled = await retrieve(db, project, chart.slices![1]!.drilldown_id!);
    expect(drilled.kind === 'users' && drilled.rows.map((r) => r.user_id)).toEqual(['u1', 'u2']);
  });
});

describe('sentiment-analysis', () => {
  it('splits the conversations with a matching intent by sentiment', async () => {
    const refund = await runChart(db, project, 'sentiment-analysis', {
      range: R,
      intentFilter: { intent: 'refund' },
    });
    expect(withoutDrilldowns(refund).slices).toEqual([
      { label: 'positive', value: 1, percent: 50 },
      { label: 'neutral', value: 1, percent: 50 },
      { label: 'negative', value: 0, percent: 0 },
    ]);
    const none = await runChart(db, project, 'sentiment-analysis', {
      range: R,
      intentFilter: { intent: 'Any Intent', number_of: 0, number_of_operator: 'eq' },
    });
    expect(none.highlights).toEqual({
      positive_percent: 0,
      positive_total: 0,
      negative_percent: 0,
      negative_total: 0,
      neutral_percent: 100,
      neutral_total: 1,
    });
  });
});

describe('conversation-analysis', () => {
  const points = async (analyse: string) => {
    const chart = await runChart(db, project, 'conversation-analysis', { range: R, analyse });
    return withoutDrilldowns(chart);
  };
  const day = (d: string) => ({ start: `2025-01-${d}T00:00:00+00:00` });

  it('answers each analyse by day', async () => {
    const conv = await points('intentConversion');
    expect(conv.points!.map((p) => [p.start, p.count, p.conversion])).toEqual([
      [day('06').start, 2, 100],
      [day('07').start, 2, 50],
    ]);
    expect(conv.highlights).toEqual({ conversion: 75, count: 4 });
    const friction = await points('firstIntentFriction');
    expect(friction.points!.map((p) => p.average_friction_percent)).toEqual([0, 100]);
    expect(friction.highlights).toEqual({
      average_friction_percent: 100 * (1 / 3),
      total_conversations: 3,
      total_first_intents_fulfilled: 2,
    });
    const fresh = await points('newIntents');
    expect(fresh.points!.map((p) => [p.new_intents, p.unique_users, p.average])).toEqual([
      // average: new intents per person showing an intent, as the OpenAPI defines it.
      [2, 2, 1],
      [0, 1, 0],
    ]);
    const sentiment = await points('sentiment');
    expect(sentiment.highlights).toEqual({ count: 4, positive: 1, negative: 1, neutral: 2 });
    const duration = await points('duration');
    expect(duration.points!.map((p) => [p.total_sec, p.average_sec])).toEqual([
      [90, 45],
      [15, 7.5],
    ]);
    const prompts = await points('prompts');
    expect(prompts.points!.map((p) => [p.total, p.average_sec])).toEqual([
      [5, 18],
      [2, 7.5],
    ]);
  });
});

describe('intent-analysis', () => {
  const chart = (analyse: string) => runChart(db, project, 'intent-analysis', { range: R, analyse });

  it('answers each analyse by day', async () => {
    const rate = await chart('intentFulfillmentRate');
    expect(rate.points!.map((p) => [p.count, p.conversion_percent])).toEqual([
      [3, 100],
      [1, 0],
    ]);
    expect(rate.highlights).toEqual({
      average_fulfillment_rate: 75,
      unique_fulfilled_intents: 2,
      total_fulfilled_intents: 3,
    });
    const friction = await chart('intentFulfillmentFriction');
    expect(friction.points!.map((p) => p.total_turns_for_fulfilled_intents)).toEqual([8, 0]);
    const sentiment = await chart('intentFulfillmentSentiment');
    expect(sentiment.highlights).toMatchObject({ positive_count: 2, neutral_count: 1, negative_count: 0 });
    const accept = await chart('intentAcceptanceRate');
    expect(accept.highlights).toEqual({
      total_intents_offered: 4,
      unique_intents_offered: 2,
      average_acceptance_rate: 75,
    });
    const attrs = await chart('attributeAcceptanceRate');
    expect(attrs.highlights).toEqual({
      total_attributes_offered: 1,
      unique_attributes_offered: 1,
      average_acceptance_rate: 100,
    });
    const efficiency = await chart('intentFulfillmentEfficiency');
    expect(efficiency.points!.map((p) => p.conversion_percent)).toEqual([0, 0]);
    expect(efficiency.highlights).toEqual({
      total_intents_fulfilled: 3,
      unique_intents_fulfilled: 2,
      average_number_turns_to_fulfill: 8 / 3,
    });
    const drilled = await retrieve(db, project, rate.points![0]!.drilldown_id!);
    expect(drilled.kind === 'users' && drilled.rows.map((r) => r.user_id)).toEqual(['u1', 'u2']);
  });
});

// Found by probing: charts that draw no time bins were refused over 1,000 day bins all the same.
describe('charts without time bins', () => {
  const LONG = { start: '2020-01-01', end: '2025-03-09', period: 'day', tz: 'UTC' } as const;

  it('take a range of any length: funnel, intents and sentiment', async () => {
    const funnel = await runChart(db, project, 'funnel', {
      range: LONG,
      eventFilters: [{ event_name: 'Turn' }, { event_name: 'Purchase' }],
    });
    expect(funnel.events?.map((s) => s.count)).toEqual([2, 1]);
    const intents = await runChart(db, project, 'intent-distribution', { range: LONG });
    expect(intents.slices?.map((s) => [s.label, s.value])).toEqual([
      ['billing', 2],
      ['refund', 2],
    ]);
    const sentiment = await runChart(db, project, 'sentiment-analysis', {
      range: LONG,
      intentFilter: { intent: 'billing' },
    });
    expect(sentiment.slices?.map((s) => s.value).reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('charts that bin are still bounded', () => {
    expect(() => controlsOf('conversation-analysis', { range: LONG, analyse: 'duration' })).toThrow(
      /range has 1894 day bins; at most 1000 are allowed/,
    );
  });
});

describe('grouping by an observed trait (decisions §6)', () => {
  it('puts persons without the trait in a last (none) group, which drills down to them', async () => {
    const duration = await runChart(db, project, 'conversation-analysis', {
      range: R,
      analyse: 'duration',
      groupBy: { trait_name: 'team' },
    });
    expect(
      withoutDrilldowns(duration).groups!.map((g) => [g.group, g.points.map((p) => p.total_sec)]),
    ).toEqual([
      ['red', [60, 10]],
      ['(none)', [30, 5]],
    ]);
    const drilled = await retrieve(db, project, duration.groups![1]!.points[0]!.drilldown_id!);
    expect(drilled.kind === 'users' && drilled.rows.map((r) => r.user_id)).toEqual(['u2']);
    const rate = await runChart(db, project, 'intent-analysis', {
      range: R,
      analyse: 'intentFulfillmentRate',
      groupBy: { trait_name: 'team' },
    });
    expect(withoutDrilldowns(rate).groups!.map((g) => [g.group, g.points.map((p) => p.count)])).toEqual([
      ['red', [2, 1]],
      ['(none)', [1, 0]],
    ]);
  });

  // Found by probing: prompts and firstIntentFriction (and four intent analyses) computed no count
  // to rank groups by, so the groups came alphabetically and the cut at 50 could drop the largest.
  it('ranks the groups most first, in every analyse', async () => {
    const p = freshProject();
    const convs = (user: string, n: number) =>
      Array.from({ length: n }, (_, i) => [
        summary(`2025-01-06T1${i}:00:00Z`, user, `s-${user}`, `c${i}`, {
          turns: 1,
          duration_s: 10,
          function_errors: 0,
          intents: ['refund'],
          sentiment: 'positive',
        }),
        intent(`2025-01-06T1${i}:00:00Z`, user, `s-${user}`, `c${i}`, 'refund', { order_id: 'A' }),
      ]).flat();
    await seed(db, p, {
      users: [
        { user_id: 'few', traits: { team: 'aaa' } },
        { user_id: 'many', traits: { team: 'zzz' } },
      ],
      events: [...convs('few', 1), ...convs('many', 3)],
    });
    const order = async (chart: 'conversation-analysis' | 'intent-analysis', analyse: string) =>
      (await runChart(db, p, chart, { range: R, analyse, groupBy: { trait_name: 'team' } })).groups!.map(
        (g) => g.group,
      );
    for (const analyse of CONVERSATION_ANALYSES)
      expect(await order('conversation-analysis', analyse), analyse).toEqual(['zzz', 'aaa']);
    for (const analyse of INTENT_ANALYSES)
      expect(await order('intent-analysis', analyse), analyse).toEqual(['zzz', 'aaa']);
  });

  it('leaves them out when the groups are listed', async () => {
    const duration = await runChart(db, project, 'conversation-analysis', {
      range: R,
      analyse: 'duration',
      groupBy: { trait_name: 'team', trait_values: ['red'] },
    });
    expect(withoutDrilldowns(duration).groups!.map((g) => g.group)).toEqual(['red']);
  });
});

// DuckDB sums in parallel, in an order that varies: the same data answered 876.6189999999998 and
// …99 (found by probing). Sums carry 15 significant digits, without a double's noise.
describe('sums of fractional seconds', () => {
  it('are the numbers their digits mean', async () => {
    const own = freshProject();
    const durations = [10, 20, 30, 40, 50, 60, 0.1, 0.2];
    await seed(db, own, {
      users: [{ user_id: 'u9', traits: {} }],
      events: durations.map((duration_s, i) =>
        summary(`2025-01-06T1${i}:00:00Z`, 'u9', 's9', `c${i}`, { turns: 1, duration_s, intents: [] }),
      ),
    });
    expect(durations.reduce((a, b) => a + b, 0)).not.toBe(210.3);
    const duration = await runChart(db, own, 'conversation-analysis', { range: R, analyse: 'duration' });
    expect(duration.points![0]!.total_sec).toBe(210.3);
    expect(duration.highlights).toMatchObject({ total_sec: 210.3, average_sec: 210.3 / 8 });
  });
});
