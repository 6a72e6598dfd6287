import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionChartResponseSchema } from '../src/shared/chart-responses.js';
import { call, withQuery } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * decisions §2's chart limits are server defaults, each configurable on `cas serve` (`--max-chart-bins`,
 * `--max-session-ids`, `--max-drilldown-rows`; the flags' parsing is in src/cli/serve-limits.test.ts):
 * a service started with other values answers by them.
 */
let wide: TestService;
let plain: TestService;
beforeAll(async () => {
  [wide, plain] = await Promise.all([
    startTestService(undefined, {
      limits: { chartBins: 1_500, sessionIdsPerPoint: 2, chartRatePerSecond: 0 },
    }),
    startTestService(),
  ]);
});
afterAll(async () => {
  await Promise.all([wide?.stop(), plain?.stop()]);
});

const days = (n: number) => ({
  start: '2020-01-01',
  end: new Date(Date.UTC(2020, 0, 1 + n)).toISOString().slice(0, 10),
  period: 'day',
  tz: 'UTC',
});
const segmentation = (t: TestService, n: number) =>
  call(
    t,
    'GET',
    withQuery('/bc/v1/charts/segmentation-chart', {
      chartControls: { range: days(n), eventFilters: [{ event_name: 'Any Event' }] },
    }),
  );

describe('chart limits set on the service', () => {
  it('--max-chart-bins: a range of 1,200 days is refused by default and answered at 1,500', async () => {
    const refused = await segmentation(plain, 1_200);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json)).toContain('1200 day bins; at most 1000 are allowed');
    const answered = await segmentation(wide, 1_200);
    expect(answered.status, JSON.stringify(answered.json).slice(0, 300)).toBe(200);
    expect((await segmentation(wide, 1_501)).status).toBe(400);
  });

  it('--max-session-ids: a session-chart point lists at most that many sessions', async () => {
    const events = ['s1', 's2', 's3'].map((session, i) => ({
      type: 'start_session',
      session_id: session,
      user_id: 'u',
      timestamp: `2020-01-01T0${i}:00:00Z`,
    }));
    expect((await call(wide, 'POST', '/bc/v1/events/queue', events)).status).toBe(200);
    const res = await call(
      wide,
      'GET',
      withQuery('/bc/v1/charts/session-chart', {
        chartControls: { range: days(1) },
      }),
    );
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(200);
    const [point] = sessionChartResponseSchema.parse(res.json).points ?? [];
    expect(point?.sessions).toBe(3);
    expect(point?.session_ids).toEqual(['s1', 's2']);
  });
});
