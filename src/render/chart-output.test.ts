import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { type ChartControlsByKind, type ChartKind, parseChartControls } from '../shared/chart-controls.js';
import { chartResponseSchemas } from '../shared/chart-responses.js';
import { type ChartView, renderChart } from './chart-output.js';

/** ESC [ starts every ANSI colour code. */
const hasAnsi = (text: string) => text.includes('\u001b[');
const range = { start: '2025-03-03', end: '2025-03-06', period: 'day', tz: 'America/New_York' } as const;

function controls<K extends ChartKind>(kind: K, raw: unknown): ChartControlsByKind[K] {
  const parsed = parseChartControls(kind, raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.value;
}

/** The cells of each body line of a cli-table3 table (`│ a │ b │`), trimmed. */
function cells(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('│'))
    .map((line) =>
      line
        .split('│')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}

const day = (d: number) => `2025-03-0${d}T00:00:00-05:00`;
const seg = (d: number, total: number, unique: number) => ({
  start: day(d),
  end: day(d + 1),
  total,
  unique,
  average: unique === 0 ? 0 : total / unique,
});

// An extra field the client does not know: --format json must keep it.
const segmentationRaw = [
  {
    event_name: 'Conversation Turn',
    points: [seg(3, 12, 5), seg(4, 0, 0), seg(5, 6, 3)],
    highlights: { average_events: 6, average_unique_users: 8 / 3 },
    future_field: { kept: true },
  },
  {
    event_name: 'Buy, "now"',
    groups: [{ group: 'pro', points: [seg(3, 2, 1), seg(4, 1, 1), seg(5, 0, 0)] }],
  },
];
const segmentationView: ChartView = {
  kind: 'segmentation',
  response: chartResponseSchemas.segmentation.parse(segmentationRaw),
  raw: segmentationRaw,
  parsed: controls('segmentation', {
    range,
    eventFilters: [
      { event_name: 'Conversation Turn' },
      { event_name: 'Buy, "now"', groupBy: { property_name: 'plan', property_values: ['pro'] } },
    ],
  }),
};

describe('segmentation', () => {
  it('prints a table per series and group with the numbers, a bar scaled to the max, and highlights', () => {
    const text = renderChart(segmentationView, 'table', { color: false, verbose: false });
    expect(hasAnsi(text)).toBe(false);
    const rows = cells(text);
    expect(rows[0]).toEqual(['Day', 'Total', 'Unique', 'Average', '']);
    expect(rows[1]).toEqual(['2025-03-03', '12', '5', '2.4', '█'.repeat(20)]);
    expect(rows[2]).toEqual(['2025-03-04', '0', '0', '0', '']);
    expect(rows[3]).toEqual(['2025-03-05', '6', '3', '2', '█'.repeat(10)]);
    expect(text).toContain('Average per day: 6 events, 2.67 unique users');
    expect(text).toContain('Buy, "now" · plan = pro');
    expect(rows[5]).toEqual(['2025-03-03', '2', '1', '2', '█'.repeat(20)]);
    expect(text).toContain('Average per day: 1 event, 0.667 unique users');
  });

  it('titles a filtered series by its filters, so two series of one event can be told apart', () => {
    const twice = [
      { event_name: 'Conversation Turn', points: [seg(3, 12, 5)] },
      { event_name: 'Conversation Turn', points: [seg(3, 4, 2)] },
    ];
    const view: ChartView = {
      kind: 'segmentation',
      response: chartResponseSchemas.segmentation.parse(twice),
      raw: twice,
      parsed: controls('segmentation', {
        range,
        eventFilters: [
          { event_name: 'Conversation Turn' },
          {
            event_name: 'Conversation Turn',
            with: [
              { property_name: 'model', operator: 'eq', values: ['gpt-4o'] },
              { property_name: 'country', operator: 'in', values: ['US', 'CA'] },
            ],
          },
        ],
      }),
    };
    const titles = renderChart(view, 'table', { color: false, verbose: false })
      .split('\n')
      .filter((line) => line.startsWith('Conversation Turn'));
    expect(titles).toEqual([
      'Conversation Turn',
      'Conversation Turn where model = gpt-4o and country in US,CA',
    ]);
    // CSV and JSONL tell them apart by the series' index in eventFilters.
    const csvRows: Record<string, string>[] = parse(
      renderChart(view, 'csv', { color: false, verbose: false }),
      {
        columns: true,
      },
    );
    expect(csvRows.map((r) => [r.series, r.event_name, r.total])).toEqual([
      ['0', 'Conversation Turn', '12'],
      ['1', 'Conversation Turn', '4'],
    ]);
  });

  it('colours only when asked', () => {
    expect(hasAnsi(renderChart(segmentationView, 'table', { color: true, verbose: false }))).toBe(true);
  });

  it('prints the service body unchanged as JSON, unknown fields included', () => {
    const text = renderChart(segmentationView, 'json', { color: true, verbose: false });
    expect(JSON.parse(text)).toEqual(segmentationRaw);
    expect(hasAnsi(text)).toBe(false);
  });

  it('writes CSV one row per point that parses back to the same numbers', () => {
    const text = renderChart(segmentationView, 'csv', { color: true, verbose: false });
    expect(hasAnsi(text)).toBe(false);
    const records: Record<string, string>[] = parse(text, { columns: true });
    const points = [
      ...segmentationRaw[0]!.points!.map((p) => ({
        series: '0',
        event_name: 'Conversation Turn',
        group: '',
        ...p,
      })),
      ...segmentationRaw[1]!.groups![0]!.points.map((p) => ({
        series: '1',
        event_name: 'Buy, "now"',
        group: 'pro',
        ...p,
      })),
    ];
    expect(records).toHaveLength(points.length);
    records.forEach((record, i) => {
      const point = points[i]!;
      expect(record).toMatchObject({
        series: point.series,
        event_name: point.event_name,
        group: point.group,
        start: point.start,
      });
      expect([record.total, record.unique, record.average].map(Number)).toEqual([
        point.total,
        point.unique,
        point.average,
      ]);
    });
  });

  it('writes JSONL with the same rows', () => {
    const lines = renderChart(segmentationView, 'jsonl', { color: false, verbose: false })
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(6);
    expect(JSON.parse(lines[2]!)).toEqual({
      series: 0,
      event_name: 'Conversation Turn',
      group: '',
      ...seg(5, 6, 3),
    });
  });
});

const cell = (week: number, count: number, percent: number) => ({
  start: `2025-03-${String(3 + 7 * week).padStart(2, '0')}T00:00:00-05:00`,
  end: `2025-03-${String(10 + 7 * week).padStart(2, '0')}T00:00:00-04:00`,
  count,
  percent,
});
const retentionRaw = [
  {
    chart_name: 'Signed Up',
    rows: [
      [cell(0, 10, 100), cell(1, 4, 40), cell(2, 1, 10)],
      [cell(1, 5, 100), cell(2, 3, 60)],
      [cell(2, 2, 100)],
    ],
    row_headers: [10, 5, 2],
    column_headers: [
      { count: 17, average: 100 },
      { count: 7, average: (100 * 7) / 15 },
      { count: 1, average: 10 },
    ],
    total_users: 17,
  },
];
const retentionView: ChartView = {
  kind: 'retention',
  response: chartResponseSchemas.retention.parse(retentionRaw),
  raw: retentionRaw,
  parsed: controls('retention', {
    range: { ...range, end: '2025-03-20', period: 'week' },
    startingEvent: { event_name: 'S' },
  }),
};

describe('retention', () => {
  it('prints the cohort triangle with percentages and column averages', () => {
    const rows = cells(renderChart(retentionView, 'table', { color: false, verbose: false }));
    expect(rows[0]).toEqual(['Cohort', 'Users', 'Week 0', 'Week 1', 'Week 2']);
    expect(rows[1]).toEqual(['2025-W10 Mar 3', '10', '100.0%', '40.0%', '10.0%']);
    expect(rows[2]).toEqual(['2025-W11 Mar 10', '5', '100.0%', '60.0%', '']);
    expect(rows[3]).toEqual(['2025-W12 Mar 17', '2', '100.0%', '', '']);
    expect(rows[4]).toEqual(['Average', '17', '100.0%', '46.7%', '10.0%']);
  });

  it('adds counts with -v, and highlights', () => {
    const text = renderChart(retentionView, 'table', { color: false, verbose: true });
    expect(cells(text)[1]).toEqual(['2025-W10 Mar 3', '10', '100.0% (10)', '40.0% (4)', '10.0% (1)']);
    expect(text).toContain('Total users: 17 in 3 cohorts');
    expect(text).toContain('Average week 1 retention: 46.7%');
    expect(hasAnsi(text)).toBe(false);
  });

  it('counts only the cohorts someone started in', () => {
    const raw = [
      {
        ...retentionRaw[0]!,
        rows: [...retentionRaw[0]!.rows, [cell(3, 0, 0)]],
        row_headers: [10, 5, 2, 0],
        column_headers: retentionRaw[0]!.column_headers,
      },
    ];
    const view: ChartView = { ...retentionView, response: chartResponseSchemas.retention.parse(raw), raw };
    const text = renderChart(view, 'table', { color: false, verbose: false });
    expect(text).toContain('Total users: 17 in 3 cohorts');
    // Nobody to retain: no rate, where "0.0%" beside the cohorts' 100.0% read as a cohort that left.
    expect(cells(text)[4]).toEqual(['2025-W13 Mar 24', '0', '–', '', '']);
  });

  it('writes one CSV row per cell with its cohort', () => {
    const records: Record<string, string>[] = parse(
      renderChart(retentionView, 'csv', { color: false, verbose: false }),
      {
        columns: true,
      },
    );
    expect(records).toHaveLength(6);
    expect(records[4]).toEqual({
      chart_name: 'Signed Up',
      cohort_start: cell(1, 0, 0).start,
      cohort_users: '5',
      period: '1',
      start: cell(2, 0, 0).start,
      end: cell(2, 0, 0).end,
      count: '3',
      percent: '60',
    });
  });
});

const point = (d: number, sessions: number, conversations: number, average_length: number) => ({
  start: day(d),
  end: day(d + 1),
  sessions,
  session_ids: Array.from({ length: sessions }, (_, i) => `s${d}-${i}`),
  conversations,
  average_length,
});
const sessionRaw = {
  chart_name: 'Sessions',
  groups: [
    { group: 'pro', points: [point(3, 3, 4, 65), point(4, 0, 0, 0), point(5, 1, 1, 3723)] },
    { group: 'free', points: [point(3, 1, 1, 5), point(4, 0, 0, 0), point(5, 0, 0, 0)] },
  ],
};
const sessionView: ChartView = {
  kind: 'session',
  response: chartResponseSchemas.session.parse(sessionRaw),
  raw: sessionRaw,
  parsed: controls('session', { range, groupBy: { trait_name: 'plan' } }),
};

describe('sessions', () => {
  it('prints sessions, conversations, human lengths and a bar per group', () => {
    const text = renderChart(sessionView, 'table', { color: false, verbose: false });
    const rows = cells(text);
    expect(rows[0]).toEqual(['Day', 'Sessions', 'Conversations', 'Avg length', '']);
    expect(rows[1]).toEqual(['2025-03-03', '3', '4', '1m 05s', '█'.repeat(20)]);
    expect(rows[3]).toEqual(['2025-03-05', '1', '1', '1h 02m', '██████▋']);
    expect(text).toContain('Sessions · plan = pro');
    expect(text).toContain('Sessions · plan = free');
    // (3 × 65 + 3723) / 4 = 979.5 s.
    expect(text).toContain('Total: 4 sessions, 5 conversations; average length 16m 20s');
    expect(hasAnsi(text)).toBe(false);
  });

  it('writes CSV rows per point and group with the same numbers', () => {
    const records: Record<string, string>[] = parse(
      renderChart(sessionView, 'csv', { color: false, verbose: false }),
      {
        columns: true,
      },
    );
    expect(records).toHaveLength(6);
    expect(records[2]).toMatchObject({
      group: 'pro',
      sessions: '1',
      conversations: '1',
      average_length: '3723',
    });
    expect(records[3]).toMatchObject({ group: 'free', sessions: '1', average_length: '5' });
  });
});

const usersRaw = {
  chart_name: 'Users by plan',
  slices: [
    { label: 'pro', value: 6, percent: 60 },
    { label: 'free', value: 3, percent: 30 },
    { label: '(none)', value: 1, percent: 10 },
  ],
  highlights: { max_percent: 60, min_percent: 10, max_count: 6, min_count: 1 },
};
const usersView: ChartView = {
  kind: 'user-composition',
  response: chartResponseSchemas['user-composition'].parse(usersRaw),
  raw: usersRaw,
  parsed: controls('user-composition', { range, selectedTrait: { trait_name: 'plan' } }),
};

describe('users', () => {
  it('prints value, users, percent and a bar per slice, with highlights', () => {
    const text = renderChart(usersView, 'table', { color: false, verbose: false });
    expect(cells(text)).toEqual([
      ['plan', 'Users', 'Percent', ''],
      ['pro', '6', '60.0%', '█'.repeat(20)],
      ['free', '3', '30.0%', '█'.repeat(10)],
      ['(none)', '1', '10.0%', '███▍'],
    ]);
    expect(text).toContain('Total: 10 users in 3 slices');
    expect(text).toContain('Largest: pro (60.0%, 6 users); smallest: (none) (10.0%, 1 user)');
  });

  /** The users chart of `slices` (label, users, percent). */
  const slicesView = (...slices: Array<[string, number, number]>): ChartView => {
    const raw = {
      chart_name: 'plan',
      slices: slices.map(([label, value, percent]) => ({ label, value, percent })),
    };
    return { ...usersView, response: chartResponseSchemas['user-composition'].parse(raw), raw };
  };

  it('draws a value holding a line break on one line, the break shown as \\n', () => {
    const view = slicesView(['two\nlines', 2, 50], ['two lines', 2, 50]);
    const rows = cells(renderChart(view, 'table', { color: false, verbose: false }));
    expect(rows.slice(1).map((r) => r[0])).toEqual(['two\\nlines', 'two lines']);
  });

  it('says every slice is equal on a tie instead of naming one as both largest and smallest', () => {
    const view = slicesView(['free', 1, 50], ['pro', 1, 50]);
    const text = renderChart(view, 'table', { color: false, verbose: false });
    expect(text).toContain('Every slice: 50.0%, 1 user');
    expect(text).not.toContain('Largest');
  });

  it('writes JSONL and CSV with the same slices', () => {
    const jsonl = renderChart(usersView, 'jsonl', { color: false, verbose: false }).trimEnd().split('\n');
    expect(jsonl.map((l) => JSON.parse(l))).toEqual(
      usersRaw.slices.map((s) => ({ chart_name: 'Users by plan', group: '', ...s })),
    );
    const records: Record<string, string>[] = parse(
      renderChart(usersView, 'csv', { color: false, verbose: false }),
      {
        columns: true,
      },
    );
    expect(records.map((r) => [r.label, Number(r.value), Number(r.percent)])).toEqual(
      usersRaw.slices.map((s) => [s.label, s.value, s.percent]),
    );
  });
});
