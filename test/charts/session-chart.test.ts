import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { seed } from '../helpers/seed.js';
import { freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';

/**
 * The session chart by hand, as documentation: New York, 9–10 March 2025 (the 9th has 23 hours).
 * A session sits in the bin of its start; its length is end − start, or last event − start while
 * it is open.
 *
 *   s1 alice  starts 9th 01:00-05:00, ended after 600 s, 2 conversations, 2 turns
 *   s2 bob    starts 9th 08:00-04:00, still open, last event after 90 s, 1 turn
 *   s3 anon   starts 9th 23:59:59-04:00, ended after 30 s, 1 conversation   (anon was merged into alice)
 *   s4 bob    starts 10th 00:00-04:00, ended after 60 s
 *   s5 bob    starts 11th 00:00-04:00 = range.end: not in the chart
 */

let db: Database;
let project: string;
const range = { start: '2025-03-09', end: '2025-03-11', period: 'day', tz: 'America/New_York' };
const plus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();

beforeAll(async () => {
  db = await openChartDb();
  project = freshProject();
  const s1 = '2025-03-09T06:00:00.000Z';
  const s2 = '2025-03-09T12:00:00.000Z';
  const s3 = '2025-03-10T03:59:59.000Z';
  const s4 = '2025-03-10T04:00:00.000Z';
  await seed(db, project, {
    users: [
      { user_id: 'alice', traits: { plan: 'pro' } },
      { user_id: 'bob', traits: { plan: 'free' } },
      { user_id: 'anon', canonical_user_id: 'alice', anonymous: true },
    ],
    sessions: [
      {
        session_id: 's1',
        user_id: 'alice',
        started_at: s1,
        ended_at: plus(s1, 600),
        last_event_at: plus(s1, 500),
      },
      { session_id: 's2', user_id: 'bob', started_at: s2, ended_at: null, last_event_at: plus(s2, 90) },
      { session_id: 's3', user_id: 'anon', started_at: s3, ended_at: plus(s3, 30) },
      { session_id: 's4', user_id: 'bob', started_at: s4, ended_at: plus(s4, 60) },
      { session_id: 's5', user_id: 'bob', started_at: '2025-03-11T04:00:00.000Z', ended_at: null },
    ],
    conversations: [
      { conversation_id: 's1/1', session_id: 's1' },
      { conversation_id: 's1/2', session_id: 's1' },
      { conversation_id: 's3/1', session_id: 's3' },
    ],
    events: [
      { event: 'Turn', ts: plus(s1, 10), user_id: 'alice', session_id: 's1', conversation_id: 's1/1' },
      { event: 'Turn', ts: plus(s1, 20), user_id: 'alice', session_id: 's1', conversation_id: 's1/2' },
      { event: 'Turn', ts: plus(s2, 10), user_id: 'bob', session_id: 's2' },
    ],
  });
});
afterAll(() => db.close());

const DAY9 = { start: '2025-03-09T00:00:00-05:00', end: '2025-03-10T00:00:00-04:00' };
const DAY10 = { start: '2025-03-10T00:00:00-04:00', end: '2025-03-11T00:00:00-04:00' };

describe('session chart', () => {
  it('counts sessions, their conversations and mean length per bin of their start', async () => {
    const chart = await runChart(db, project, 'session', { range });
    expect(withoutDrilldowns(chart)).toEqual({
      chart_name: 'Sessions',
      points: [
        {
          ...DAY9,
          sessions: 3,
          session_ids: ['s1', 's2', 's3'],
          conversations: 3,
          average_length: (600 + 90 + 30) / 3,
        },
        { ...DAY10, sessions: 1, session_ids: ['s4'], conversations: 0, average_length: 60 },
      ],
    });
  });

  it('keeps sessions whose own events satisfy the filters, number_of counted per session', async () => {
    const twoTurns = await runChart(db, project, 'session', {
      range,
      eventFilters: [{ event_name: 'Turn', number_of: 2 }],
    });
    expect(twoTurns.points!.map((p) => p.session_ids)).toEqual([['s1'], []]);
    const noTurns = await runChart(db, project, 'session', {
      range,
      eventFilters: [{ event_name: 'Turn', number_of: 0, number_of_operator: 'eq' }],
    });
    expect(noTurns.points!.map((p) => p.session_ids)).toEqual([['s3'], ['s4']]);
  });

  it('groups by the session user’s trait, merged users by the trait of the person', async () => {
    const chart = await runChart(db, project, 'session', { range, groupBy: { trait_name: 'plan' } });
    expect(chart.groups!.map((g) => [g.group, g.points.map((p) => p.session_ids)])).toEqual([
      ['free', [['s2'], ['s4']]],
      ['pro', [['s1', 's3'], []]],
    ]);
  });

  it('narrows to one session or conversation with the query parameters', async () => {
    const one = await runChart(db, project, 'session', { range }, { conversation_id: 's3/1' });
    expect(one.points!.map((p) => p.session_ids)).toEqual([['s3'], []]);
  });

  it('drills a point down to its sessions', async () => {
    const chart = await runChart(db, project, 'session', { range });
    const drilled = await retrieve(db, project, chart.points![0]!.drilldown_id!);
    expect(drilled).toMatchObject({ kind: 'sessions', total: 3, truncated: false });
    expect(drilled.rows[2]).toEqual({
      session_id: 's3',
      user_id: 'alice',
      id: 'alice',
      started_at: '2025-03-10T03:59:59.000Z',
      ended_at: '2025-03-10T04:00:29.000Z',
      conversations: 1,
    });
  });
});
