import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/service/store/database.js';
import { Tenants } from '../src/service/store/tenants.js';
import { startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15, denial of service 3: a filter `in [0..100]` ran 200 s on one reader connection that every
 * tenant shared, so another tenant's event-names waited, and chart validation queued behind it.
 * A real `cas serve` with a 2 s query budget over a DuckDB file holding 300,000 events of tenant A
 * (the expensive chart takes some ten times the budget unbounded) and a few of tenant B.
 */

const dir = tempDir('cas-dos-budget-');
let child: ChildProcess | undefined;
let url = '';
/** A second service on a copy of the store: a long budget, one reader per tenant. */
let patient: ChildProcess | undefined;
let patientUrl = '';
const A = { authorization: 'Bearer key-a', 'x-app-id': 'big' };
const B = { authorization: 'Bearer key-b', 'x-app-id': 'small' };

/** Writes the projects straight into the store: ingesting 300,000 events would take the test's time. */
async function generate(path: string): Promise<void> {
  const db = await openDatabase(path);
  try {
    const tenants = await Tenants.load(db);
    await tenants.provision({ apiKey: 'key-a', projectId: 'big' });
    await tenants.provision({ apiKey: 'key-b', projectId: 'small' });
    await db.write(async (tx) => {
      await tx.run(`INSERT INTO users SELECT 'big', 'u' || i, 'u' || i, 'u' || i, false,
        json_object('plan', 'p' || (i % 5)), TIMESTAMPTZ '2025-01-01 00:00:00+00', NULL, NULL FROM range(20000) r(i)`);
      await tx.run(`INSERT INTO events SELECT 'big', 'e' || i, 'Turn', 'custom',
        TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i * 90), 'u' || (i % 20000), 's' || (i // 20), NULL,
        json_object('n', i % 1000, 'model', 'm' || (i % 3000)), NULL, now(), NULL, NULL FROM range(300000) r(i)`);
      await tx.run(`INSERT INTO events SELECT 'small', 'x' || i, 'Small ' || (i % 7), 'custom',
        TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i * 60), NULL, NULL, NULL, NULL, NULL, now(), NULL, NULL
        FROM range(100) r(i)`);
    });
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  await generate(join(dir.path, 'cas.duckdb'));
  const copy = join(dir.path, 'patient');
  mkdirSync(copy);
  copyFileSync(join(dir.path, 'cas.duckdb'), join(copy, 'cas.duckdb'));
  const started = await startServe(['--data-dir', dir.path, '--query-timeout', '2s', '--chart-rate', '0']);
  child = started.child;
  url = started.info.url;
  const second = await startServe([
    '--data-dir',
    copy,
    '--query-timeout',
    '120s',
    '--read-connections',
    '2',
    '--chart-rate',
    '0',
  ]);
  patient = second.child;
  patientUrl = second.info.url;
}, 90_000);

afterAll(async () => {
  if (child) await stopChild(child);
  if (patient) await stopChild(patient);
  dir.cleanup();
});

async function get(path: string, headers: Record<string, string>, base = url) {
  const started = Date.now();
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, text, ms: Date.now() - started };
}

const range = { start: '2025-01-01', end: '2026-01-01', period: 'day', tz: 'UTC' };
/** 300 series by month: 300 scans of A's events, some 20 s unbounded on this data. */
const expensive = {
  range: { ...range, period: 'month' },
  eventFilters: Array(300).fill({ event_name: 'Turn' }),
};
/** The filter: 200 s on 1.15M events before property filters compared with IN lists. */
const inFilter = {
  range,
  eventFilters: [
    {
      event_name: 'Turn',
      with: [{ property_name: 'n', operator: 'in', values: Array.from({ length: 101 }, (_, i) => i) }],
    },
  ],
};
const chart = (controls: unknown, headers: Record<string, string>) =>
  get(
    `/bc/v1/charts/segmentation-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}`,
    headers,
  );

describe('chart cost is bounded and tenants do not starve each other', () => {
  it('stops an expensive chart at the time budget with 400 "query too expensive"', async () => {
    const res = await chart(expensive, A);
    expect(res.status, res.text).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/^query too expensive: .*2 s budget.*--query-timeout/);
    expect(res.ms).toBeGreaterThanOrEqual(1_900);
    expect(res.ms).toBeLessThan(8_000);
  });

  it('answers the filter in [0..100] within the budget', async () => {
    const res = await chart(inFilter, A);
    expect(res.status, res.text).toBe(200);
    const [series] = JSON.parse(res.text) as Array<{ points: Array<{ total: number }> }>;
    // n = i % 1000 for 300,000 events: 101 of every 1,000 match.
    expect(series!.points.reduce((sum, p) => sum + p.total, 0)).toBe(30_300);
  });

  it("keeps another tenant's event-names and both tenants' validation fast while A's charts run", async () => {
    const flood = Promise.all(Array.from({ length: 4 }, () => chart(expensive, A)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const latencies: number[] = [];
    for (let i = 0; i < 8; i++) {
      const names = await get('/bc/v1/agg/event-names', B);
      expect(names.status).toBe(200);
      expect(JSON.parse(names.text)).toHaveLength(7);
      latencies.push(names.ms);
    }
    // Validation (zone and RE2 checks) answers at once, even for the tenant whose readers are all busy.
    const badZone = await chart({ ...expensive, range: { ...range, tz: 'Mars/Olympus' } }, A);
    expect(badZone.status).toBe(400);
    expect(badZone.text).toMatch(/unknown time zone/);
    const badRegex = await chart(
      {
        range,
        eventFilters: [
          { event_name: 'Turn', with: [{ property_name: 'm', operator: 'regex', values: ['(?<x'] }] },
        ],
      },
      A,
    );
    expect(badRegex.status).toBe(400);
    const answered = await flood;
    expect(answered.map((r) => r.status)).toEqual([400, 400, 400, 400]);
    expect(Math.max(...latencies), latencies.join(', ')).toBeLessThan(1_000);
    expect(badZone.ms).toBeLessThan(1_000);
    expect(badRegex.ms).toBeLessThan(1_000);
  });
});

describe('a chart whose client went away', () => {
  // With two readers a tenant holds one: A's next request waits for the reader its abandoned chart
  // has. It ran to the 120 s budget (some 20 s unbounded here) before the query was stopped.
  it("stops at once, and the tenant's next request gets the reader", async () => {
    const path = `/bc/v1/charts/segmentation-chart?chartControls=${encodeURIComponent(JSON.stringify(expensive))}`;
    const gone = new AbortController();
    const abandoned = fetch(`${patientUrl}${path}`, { headers: A, signal: gone.signal }).catch(
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    gone.abort();
    expect(await abandoned).toMatchObject({ name: 'AbortError' });
    const next = await get('/bc/v1/agg/event-names', A, patientUrl);
    expect(next.status, next.text).toBe(200);
    expect(JSON.parse(next.text)).toEqual(['Turn']);
    expect(next.ms).toBeLessThan(8_000);
  });
});
