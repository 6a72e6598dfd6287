import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartResponseSchemas } from '../src/shared/chart-responses.js';
import { type CliResult, runCli, startServe, stopChild } from './helpers/cli.js';
import { FIXTURES } from './helpers/import.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 6 acceptance, end to end: `cas serve` over a fresh data directory, the fixtures imported by
 * the built CLI through it, then each chart's typical command in every output format. The service's
 * own JSON (fetched directly) is the reference for the CLI's numbers; the fixture files themselves
 * are the reference where counting them is cheap, so a bug shared by CLI and service still shows.
 */

type Rec = Record<string, unknown>;

const FILES = ['turns.csv', 'events.jsonl', 'turns-more.csv.gz'].map((f) => join(FIXTURES, f));

function fixtureRecords(): Rec[] {
  return FILES.flatMap((file) => {
    const raw = readFileSync(file);
    const text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
    if (file.includes('.csv')) return parse(text, { columns: true }) as Rec[];
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Rec);
  });
}

const records = fixtureRecords();
const strings = (value: unknown): string[] => (typeof value === 'string' ? [value] : []);
const ids = (key: string) => new Set(records.flatMap((r) => strings(r[key])));
const fixture = {
  turns: records.filter((r) => r.kind === 'turn').length,
  bigPurchases: records.filter(
    (r) => r.event === 'Purchase' && Number((r.properties as Rec | undefined)?.amount) > 100,
  ).length,
  users: ids('user_id'),
  devices: ids('device_id'),
  plans: new Map(
    records.filter((r) => r.kind === 'identify').map((r) => [String(r.id), String((r.traits as Rec).plan)]),
  ),
};

// The fixtures span 2025-01-06..2025-02-02, so this window holds every record.
const RANGE = { start: '2025-01-06', end: '2025-02-03', period: 'week', tz: 'UTC' };
const RANGE_FLAGS = ['--from', '2025-01-06', '--to', '2025-02-02', '--period', 'week', '--tz', 'UTC'];

const dir = tempDir('cas-chart-e2e-');
let serve: ChildProcess | undefined;
let conn: { url: string; api_key: string; project_id: string };
let imported: CliResult;

beforeAll(async () => {
  const started = await startServe(['--data-dir', join(dir.path, 'data')]);
  serve = started.child;
  conn = started.info;
  // Through CAS_DATA_DIR: the CLI must find the running server rather than fail on the DB lock.
  imported = await runCli(['import', ...FILES, '--json'], { env: { CAS_DATA_DIR: started.info.data_dir } });
});
afterAll(async () => {
  if (serve) await stopChild(serve);
  dir.cleanup();
});

// NO_COLOR unset: only stdout being a pipe may keep colour out of it.
const chart = (args: string[]) => {
  const remote = ['--endpoint', conn.url, '--api-key', conn.api_key, '--project', conn.project_id];
  return runCli([...remote, 'chart', ...args], { env: { NO_COLOR: '' } });
};

async function serviceJson(route: string, controls: Rec): Promise<unknown> {
  const query = encodeURIComponent(JSON.stringify(controls));
  const res = await fetch(`${conn.url}/bc/v1/charts/${route}-chart?chartControls=${query}`, {
    headers: { authorization: `Bearer ${conn.api_key}`, 'x-app-id': conn.project_id },
  });
  expect(res.status).toBe(200);
  return res.json();
}

/**
 * Runs one typical command in every mode and checks what holds for all charts: the printed controls,
 * JSON identical to the service's (key order included), pipes clean. Returns what the chart tests compare.
 */
async function runAll(args: string[], route: string, controls: Rec) {
  const [printed, json, csv, table, piped, jsonFlag] = await Promise.all([
    chart([...args, '--print-controls']),
    chart([...args, '--format', 'json']),
    chart([...args, '--format', 'csv']),
    chart([...args, '--format', 'table', '-v']), // -v: retention cells show counts too
    chart(args),
    chart([...args, '--json']),
  ]);
  for (const result of [printed, json, csv, table, piped, jsonFlag]) {
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('\u001b[');
  }
  expect(JSON.parse(printed.stdout)).toEqual(controls);
  const body = await serviceJson(route, controls);
  expect(JSON.stringify(JSON.parse(json.stdout))).toBe(JSON.stringify(body));
  // Piped without --format (and `--json | jq`): the same JSON, nothing else on stdout or stderr.
  expect(JSON.parse(piped.stdout)).toEqual(body);
  expect(piped.stderr).toBe('');
  expect(JSON.parse(jsonFlag.stdout)).toEqual(body);
  return { body, csv: parse(csv.stdout) as string[][], table: table.stdout };
}

/** Body rows of every cli-table3 table in `text`, as trimmed cells; each table's heading row dropped. */
function tableRows(text: string): string[][] {
  const rows: string[][] = [];
  let heading = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('┌')) heading = true;
    if (!line.startsWith('│')) continue;
    const cells = line.split('│').slice(1, -1);
    if (heading) heading = false;
    else rows.push(cells.map((cell) => cell.trim()));
  }
  return rows;
}

/** CSV lines as the JSON predicts them: String(n) round-trips a double exactly, so every number is compared. */
const csvOf = (header: string, rows: unknown[][]) => [header.split(','), ...rows.map((r) => r.map(String))];

// The table's display rules (decisions: two decimals, percentages to one), applied to the JSON.
const num = (n: number) => String(Math.round(n * 100) / 100);
const pct = (n: number) => `${n.toFixed(1)}%`;
function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s === 0) return '0s';
  expect(s).toBeLessThan(3600); // the fixtures' sessions last minutes; longer ones print hours
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

describe('cas chart end to end over imported fixtures', () => {
  it('imports every fixture record through the running server', () => {
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ records: records.length, rejected: 0 });
  });

  it('segmentation: two series, a --where; totals equal the fixture counts', async () => {
    const args = ['segmentation', '--event', 'Conversation Turn', '--event', 'Purchase'];
    const { body, csv, table } = await runAll(
      [...args, '--where', 'amount > 100', ...RANGE_FLAGS],
      'segmentation',
      {
        range: RANGE,
        eventFilters: [
          { event_name: 'Conversation Turn' },
          {
            event_name: 'Purchase',
            with: [{ property_name: 'amount', operator: 'gt', values: [100] }],
          },
        ],
      },
    );
    const series = chartResponseSchemas.segmentation.parse(body);
    expect(series.map((s) => s.event_name)).toEqual(['Conversation Turn', 'Purchase']);
    const points = series.flatMap((s, i) =>
      (s.points ?? []).map((p) => ({ series: i, name: s.event_name, ...p })),
    );
    expect(points).toHaveLength(8);

    expect(csv).toEqual(
      csvOf(
        'series,event_name,group,start,end,total,unique,average',
        points.map((p) => [p.series, p.name, '', p.start, p.end, p.total, p.unique, p.average]),
      ),
    );
    const total = (name: string) =>
      csv.filter((r) => r[1] === name).reduce((sum, r) => sum + Number(r[5]), 0);
    expect(total('Conversation Turn')).toBe(fixture.turns);
    expect(total('Purchase')).toBe(fixture.bigPurchases);

    const rows = tableRows(table);
    expect(rows.map((r) => r.slice(1, 4))).toEqual(
      points.map((p) => [String(p.total), String(p.unique), num(p.average)]),
    );
    expect(rows[0]?.[0]).toBe('2025-W02 Jan 6');
    expect(table).toContain(`Total: ${fixture.turns} events`);
    expect(table).toContain(`Total: ${fixture.bigPurchases} events`);
  });

  it('retention: the cohort triangle in CSV and table equals the JSON cells', async () => {
    const args = ['retention', '--start-event', 'Session Started', '--return-event', 'Conversation Turn'];
    const { body, csv, table } = await runAll([...args, ...RANGE_FLAGS], 'retention', {
      range: RANGE,
      startingEvent: { event_name: 'Session Started' },
      returnEvents: [{ event_name: 'Conversation Turn' }],
    });
    const [result, ...others] = chartResponseSchemas.retention.parse(body);
    expect(others).toEqual([]);
    if (!result) throw new Error('no retention result');
    const rows = result.rows ?? [];
    const name = result.chart_name;
    expect(rows.map((r) => r.length)).toEqual([4, 3, 2, 1]); // four weekly bins: a triangle
    // Every fixture user and device starts a session inside the window.
    expect(result.total_users).toBe(fixture.users.size + fixture.devices.size);
    rows.forEach((row, i) => {
      const size = result.row_headers[i] ?? -1;
      expect(row[0]?.count).toBe(size);
      for (const cell of row) expect(cell.percent).toBeCloseTo(size === 0 ? 0 : (100 * cell.count) / size, 9);
    });

    const cells = rows.flatMap((row, i) =>
      row.map((c, j) => [name, row[0]?.start, result.row_headers[i], j, c.start, c.end, c.count, c.percent]),
    );
    expect(csv).toEqual(csvOf('chart_name,cohort_start,cohort_users,period,start,end,count,percent', cells));

    // A bin nobody started in shows – for its cells: no rate to give.
    const expected = rows.map((row, i) => [
      String(result.row_headers[i]),
      ...[0, 1, 2, 3].map((j) =>
        row[j] ? (result.row_headers[i] === 0 ? '–' : `${pct(row[j].percent)} (${row[j].count})`) : '',
      ),
    ]);
    expected.push([
      String(result.total_users),
      ...result.column_headers.map((h) => `${pct(h.average)} (${h.count})`),
    ]);
    const shown = tableRows(table);
    expect(shown.map((r) => r.slice(1))).toEqual(expected);
    expect(shown.map((r) => r[0])).toEqual([
      '2025-W02 Jan 6',
      '2025-W03 Jan 13',
      '2025-W04 Jan 20',
      '2025-W05 Jan 27',
      'Average',
    ]);
  });

  it('sessions grouped by --trait: one table and CSV group per plan, then (none), the same numbers', async () => {
    const { body, csv, table } = await runAll(['sessions', '--trait', 'plan', ...RANGE_FLAGS], 'session', {
      range: RANGE,
      groupBy: { trait_name: 'plan' },
    });
    const response = chartResponseSchemas.session.parse(body);
    const groups = response.groups ?? [];
    // The devices' anonymous users have no plan: their sessions are the last group (decisions §6).
    expect(fixture.devices.size).toBeGreaterThan(0);
    expect(groups.at(-1)?.group).toBe('(none)');
    expect(
      groups
        .slice(0, -1)
        .map((g) => g.group)
        .sort(),
    ).toEqual([...new Set(fixture.plans.values())].sort());
    const points = groups.flatMap((g) => g.points.map((p) => ({ group: g.group, ...p })));
    expect(points.reduce((sum, p) => sum + p.sessions, 0)).toBeGreaterThan(0);

    const name = response.chart_name;
    expect(csv).toEqual(
      csvOf(
        'chart_name,group,start,end,sessions,conversations,average_length',
        points.map((p) => [name, p.group, p.start, p.end, p.sessions, p.conversations, p.average_length]),
      ),
    );
    expect(tableRows(table).map((r) => r.slice(1, 4))).toEqual(
      points.map((p) => [String(p.sessions), String(p.conversations), duration(p.average_length)]),
    );
    for (const g of groups) expect(table).toContain(`${response.chart_name} · plan = ${g.group}`);
  });

  it('users by --trait: slices equal the plans of the fixture users, devices as (none)', async () => {
    const { body, csv, table } = await runAll(
      ['users', '--trait', 'plan', ...RANGE_FLAGS],
      'user-composition',
      {
        range: RANGE,
        selectedTrait: { trait_name: 'plan' },
      },
    );
    const slices = chartResponseSchemas['user-composition'].parse(body).slices ?? [];

    const expected = new Map<string, number>();
    const add = (label: string) => expected.set(label, (expected.get(label) ?? 0) + 1);
    for (const user of fixture.users) add(fixture.plans.get(user) ?? '(none)');
    for (const _device of fixture.devices) add('(none)');
    expect(new Map(slices.map((s) => [s.label, s.value]))).toEqual(expected);
    const all = slices.reduce((sum, s) => sum + s.value, 0);
    for (const s of slices) expect(s.percent).toBeCloseTo((100 * s.value) / all, 9);

    expect(csv).toEqual(
      csvOf(
        'chart_name,group,label,value,percent',
        slices.map((s) => ['plan', '', s.label, s.value, s.percent]),
      ),
    );
    expect(tableRows(table).map((r) => r.slice(0, 3))).toEqual(
      slices.map((s) => [s.label, String(s.value), pct(s.percent)]),
    );
    expect(table).toContain(`Total: ${all} users in ${slices.length} slices`);
  });
});
