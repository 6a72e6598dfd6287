import type { AnalysisPoint, Slice } from '../../shared/analysis-responses.js';
import type { Period } from '../../shared/time-bins.js';
import { binLabel } from '../chart-format.js';
import type { ChartView } from '../chart-output.js';

/**
 * Each chart kind as an ECharts option object, built here (typed, testable) and embedded as JSON, so
 * the page's own script only hands it to ECharts. Stored text (event names, group values, labels)
 * goes into `name`/`data` fields, which ECharts draws as SVG text and escapes in its HTML tooltips:
 * never into a formatter template, where it would be read as markup.
 */

export type EChartsOption = Record<string, unknown>;

interface Bins {
  period: Period;
  tz: string;
}

interface Line {
  name: string;
  points: ReadonlyArray<{ start: string }>;
  value: (point: never) => number;
}

const TOOLTIP_AXIS = { trigger: 'axis', confine: true };
const TOOLTIP_ITEM = { trigger: 'item', confine: true };
const GRID = { left: 56, right: 24, top: 48, bottom: 40, containLabel: true };
const LEGEND = { type: 'scroll', top: 0 };

/** Time series over the chart's bins: the x axis is the union of every series' bin labels. */
function timeSeries(lines: readonly Line[], bins: Bins, type: 'line' | 'bar'): EChartsOption {
  const labels = [
    ...new Set(lines.flatMap((l) => l.points.map((p) => binLabel(p.start, bins.period, bins.tz)))),
  ];
  const series = lines.map((l) => {
    const byLabel = new Map(
      l.points.map((p) => [binLabel(p.start, bins.period, bins.tz), (l.value as (p: unknown) => number)(p)]),
    );
    return {
      name: l.name,
      type,
      data: labels.map((x) => byLabel.get(x) ?? 0),
      showSymbol: labels.length < 40,
    };
  });
  return categoryChart(labels, series);
}

/** Series over one category axis (time bins or slice labels), a value axis and a shared tooltip. */
function categoryChart(labels: readonly string[], series: readonly unknown[]): EChartsOption {
  return {
    tooltip: TOOLTIP_AXIS,
    legend: LEGEND,
    grid: GRID,
    xAxis: { type: 'category', data: labels },
    yAxis: { type: 'value' },
    series,
  };
}

function line<P extends { start: string }>(
  name: string,
  points: readonly P[],
  value: (p: P) => number,
): Line {
  return { name, points, value: value as (point: never) => number };
}

/** Slices (user composition, intents, sentiment): a pie, or bars per slice label and group. */
function slices(
  whole: readonly Slice[] | undefined,
  groups: ReadonlyArray<{ group: string; slices: readonly Slice[] }> | undefined,
): EChartsOption {
  if (whole !== undefined && (groups === undefined || groups.length === 0)) {
    // Slices that are all zero are no data: ECharts drew them as equal shares. With none, it draws
    // the grey ring of an empty chart.
    const any = whole.some((s) => s.value !== 0);
    return {
      tooltip: TOOLTIP_ITEM,
      legend: LEGEND,
      series: [
        {
          type: 'pie',
          radius: ['35%', '68%'],
          top: 32,
          stillShowZeroSum: false,
          data: any ? whole.map((s) => ({ name: s.label, value: s.value })) : [],
        },
      ],
    };
  }
  return groupedBars((groups ?? []).map((g) => ({ name: g.group, bars: g.slices })));
}

/** One bar series per group over the union of their categories (absent ones are 0), in first-seen order. */
function groupedBars(
  groups: ReadonlyArray<{ name: string; bars: ReadonlyArray<{ label: string; value: number }> }>,
): EChartsOption {
  const labels = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.label)))];
  return categoryChart(
    labels,
    groups.map((g) => {
      const byLabel = new Map(g.bars.map((b) => [b.label, b.value]));
      return { name: g.name, type: 'bar', data: labels.map((l) => byLabel.get(l) ?? 0) };
    }),
  );
}

/** Retention as a heat-map triangle: a row per cohort, a column per period after it, percentages. */
function retention(view: Extract<ChartView, { kind: 'retention' }>, bins: Bins): EChartsOption {
  const many = view.response.length > 1;
  const rows: string[] = [];
  const data: Array<[number, number, number]> = [];
  let columns = 0;
  for (const result of view.response) {
    for (const row of result.rows ?? []) {
      const first = row[0];
      if (!first) continue;
      const label = binLabel(first.start, bins.period, bins.tz);
      const y = rows.push(many ? `${result.chart_name} · ${label}` : label) - 1;
      row.forEach((cell, x) => {
        data.push([x, y, Math.round(cell.percent * 10) / 10]);
      });
      columns = Math.max(columns, row.length);
    }
  }
  return {
    tooltip: { position: 'top', confine: true },
    // The colour scale stands at the right, clear of the axis name under the triangle.
    grid: { left: 56, right: 88, top: 24, bottom: 48, containLabel: true },
    xAxis: {
      type: 'category',
      name: 'periods after the cohort',
      nameLocation: 'middle',
      nameGap: 26,
      data: Array.from({ length: columns }, (_, i) => String(i)),
    },
    yAxis: { type: 'category', data: rows, inverse: true },
    visualMap: {
      min: 0,
      max: 100,
      calculable: true,
      orient: 'vertical',
      right: 0,
      top: 'middle',
      itemHeight: 120,
    },
    series: [{ name: 'retained %', type: 'heatmap', data, label: { show: columns <= 16 } }],
  };
}

/** The numeric fields the analysis points carry (which depend on `analyse`), first-seen order. */
function analysisFields(points: readonly AnalysisPoint[]): string[] {
  const fields: string[] = [];
  for (const p of points) {
    for (const [k, v] of Object.entries(p)) if (typeof v === 'number' && !fields.includes(k)) fields.push(k);
  }
  return fields;
}

export function echartsOption(view: ChartView): EChartsOption {
  const bins: Bins = { period: view.parsed.range.period, tz: view.parsed.range.tz };
  switch (view.kind) {
    case 'segmentation': {
      const lines = view.response.flatMap((r) => {
        const name = r.measure !== undefined ? `${r.event_name} (${r.measure})` : r.event_name;
        const value = (p: { total: number; value?: number | null | undefined }) =>
          r.measure !== undefined ? (p.value ?? 0) : p.total;
        if (r.groups !== undefined) return r.groups.map((g) => line(`${name} · ${g.group}`, g.points, value));
        return [line(name, r.points ?? [], value)];
      });
      return timeSeries(lines, bins, 'line');
    }
    case 'retention':
      return retention(view, bins);
    case 'session': {
      const r = view.response;
      if (r.groups !== undefined)
        return timeSeries(
          r.groups.map((g) => line(g.group, g.points, (p) => p.sessions)),
          bins,
          'bar',
        );
      const points = r.points ?? [];
      return timeSeries(
        [line('sessions', points, (p) => p.sessions), line('conversations', points, (p) => p.conversations)],
        bins,
        'bar',
      );
    }
    case 'user-composition':
    case 'intent-distribution':
    case 'sentiment-analysis':
      return slices(view.response.slices, view.response.groups);
    case 'funnel': {
      const r = view.response;
      const groups = r.groups ?? [{ group: 'users', events: r.events ?? [] }];
      return groupedBars(
        groups.map((g) => ({
          name: g.group,
          bars: g.events.map((e) => ({ label: e.event, value: e.count })),
        })),
      );
    }
    case 'conversation-analysis':
    case 'intent-analysis': {
      const r = view.response;
      const all = [...(r.points ?? []), ...(r.groups ?? []).flatMap((g) => g.points)];
      const fields = analysisFields(all);
      const value = (field: string) => (p: AnalysisPoint) => {
        const v = (p as Record<string, unknown>)[field];
        return typeof v === 'number' ? v : 0;
      };
      const lines =
        r.groups !== undefined
          ? r.groups.flatMap((g) =>
              fields.slice(0, 1).map((f) => line(`${g.group} · ${f}`, g.points, value(f))),
            )
          : fields.map((f) => line(f, r.points ?? [], value(f)));
      return timeSeries(lines, bins, 'line');
    }
  }
}
