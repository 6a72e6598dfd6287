import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15, denial of service 1: one GET could build a response of hundreds of megabytes (a drilldown
 * id repeating the whole query in every point, a 499,500-cell retention triangle, live events of
 * 1 MiB each) and take the service down for every tenant. A real `cas serve` over a real DuckDB
 * file: each answers at once, bounded, or with a clear 400.
 */

const dir = tempDir('cas-dos-responses-');
let child: ChildProcess | undefined;
let url = '';
const headers = { authorization: 'Bearer dos-key', 'x-app-id': 'dos' };
/** A drilldown id handed out before the restart test. */
let drilldownId = '';

async function serve(): Promise<void> {
  const started = await startServe([
    '--data-dir',
    dir.path,
    '--api-key',
    'dos-key',
    '--project',
    'dos',
    '--max-response',
    '4MiB',
    '--chart-rate',
    '0',
  ]);
  child = started.child;
  url = started.info.url;
}

beforeAll(serve, 30_000);

afterAll(async () => {
  if (child) await stopChild(child);
  dir.cleanup();
});

async function get(path: string) {
  const started = Date.now();
  const response = await fetch(`${url}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ms: Date.now() - started };
}

const chart = (kind: string, controls: unknown) =>
  get(`/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}`);

const year = { start: '2025-01-01', end: '2026-01-01', period: 'day', tz: 'UTC' };
const filter = { event_name: 'Conversation Turn', with: [{ property_name: 'model', values: ['gpt-4o'] }] };

describe('chart responses are bounded', () => {
  it('refuses 300 identical filters over a year by day at once, naming the cause, and stays up', async () => {
    // A 5.8 KB URL, as in the issue: it ran 70 s and ended in "JavaScript heap out of memory".
    const res = await chart('segmentation', {
      range: year,
      eventFilters: Array(300).fill({ event_name: 'Turn' }),
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(
      /chart too large: .*109,500 points.*100,000.*\(cas serve --max-chart-points\)/,
    );
    expect(res.ms).toBeLessThan(5_000);
    expect((await get('/healthz')).status).toBe(200);
  });

  it('gives drilldown ids that do not repeat the query, and they still drill down', async () => {
    const res = await chart('segmentation', { range: year, eventFilters: Array(30).fill(filter) });
    expect(res.status).toBe(200);
    const series = JSON.parse(res.text) as Array<{ points: Array<{ drilldown_id: string }> }>;
    const ids = series.flatMap((s) => s.points.map((p) => p.drilldown_id));
    expect(ids).toHaveLength(30 * 365);
    // Each id used to hold all 30 filters (about 4 KB); now the query's hash and the point.
    expect(Math.max(...ids.map((id) => id.length))).toBeLessThan(100);
    expect(res.text.length).toBeLessThan(4 * 1024 * 1024);
    drilldownId = ids[ids.length - 1]!;
    const drilled = await get(`/bc/v1/db/retrieve_data?id=${drilldownId}`);
    expect(drilled.status).toBe(200);
    expect(JSON.parse(drilled.text)).toMatchObject({ kind: 'users', total: 0 });
  });

  it('keeps drilldown ids working across a restart of the service', async () => {
    expect(drilldownId).not.toBe('');
    await stopChild(child!);
    await serve();
    const drilled = await get(`/bc/v1/db/retrieve_data?id=${drilldownId}`);
    expect(drilled.status, drilled.text).toBe(200);
    expect(JSON.parse(drilled.text)).toMatchObject({ kind: 'users', total: 0 });
  }, 30_000);

  it('refuses a retention triangle of 999 weeks on an empty project, twenty at once, quickly', async () => {
    // 2007-01-01 to 2026-02-22 by week is 999 bins: 499,500 cells (254 MB before).
    const controls = {
      range: { start: '2007-01-01', end: '2026-02-22', period: 'week', tz: 'UTC' },
      startingEvent: { event_name: 'Session Started' },
    };
    const started = Date.now();
    const all = await Promise.all(Array.from({ length: 20 }, () => chart('retention', controls)));
    for (const res of all) {
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).message).toMatch(/chart too large: it would have 499,500 points/);
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await get('/healthz')).status).toBe(200);
  });
});

describe('live events have a byte budget', () => {
  it('answers limit=630 over 1 MiB events with the newest that fit, and says it cut the list', async () => {
    const blob = 'x'.repeat(900_000);
    const events = Array.from({ length: 12 }, (_, i) => ({
      type: 'track',
      event: 'Big Event',
      session_id: 'big-s',
      user_id: 'big-u',
      timestamp: new Date(Date.UTC(2025, 2, 9, 12, 0, i)).toISOString(),
      properties: { blob, i },
    }));
    for (let i = 0; i < events.length; i += 4) {
      const res = await fetch(`${url}/bc/v1/events/queue`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(events.slice(i, i + 4)),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    const res = await get('/bc/v1/live-events/events?start=2025-03-09&end=2025-03-10&limit=630');
    expect(res.status).toBe(200);
    const listed = JSON.parse(res.text) as Array<{ event: string; properties?: { i?: number } }>;
    const big = listed.filter((e) => e.event === 'Big Event');
    // 4 MiB holds four 900 KB events; before, all twelve (and at 630 events, 5.4 GB) came back.
    expect(big.length).toBeGreaterThanOrEqual(1);
    expect(big.length).toBeLessThanOrEqual(4);
    expect(big.map((e) => e.properties?.i)).toEqual([11, 10, 9, 8].slice(0, big.length));
    expect(res.text.length).toBeLessThan(4.5 * 1024 * 1024);
    expect(res.headers.get('x-truncated')).toMatch(/byte budget/);
    const small = await get('/bc/v1/live-events/events?start=2025-03-09&end=2025-03-10&limit=1');
    expect(JSON.parse(small.text)).toHaveLength(1);
    expect(small.headers.get('x-truncated')).toBeNull();
  });
});
