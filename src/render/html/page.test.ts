import { describe, expect, it } from 'vitest';
import { parseChartControls } from '../../shared/chart-controls.js';
import { chartResponseSchemas } from '../../shared/chart-responses.js';
import type { ChartView } from '../chart-output.js';
import { echartsOption } from './echarts-options.js';
import { buildPage, type PageInput } from './page.js';

const HOSTILE = '</script><script>window.__pwned=1</script>';
const LIBRARY = 'window.echarts = {};';

function usersView(
  slices: unknown[] = [
    { label: HOSTILE, value: 2, percent: 66.7 },
    { label: 'pro', value: 1, percent: 33.3, extra: 'kept' },
  ],
): ChartView {
  const raw = { chart_name: 'Users', slices };
  const parsed = parseChartControls('user-composition', {
    range: { start: '2025-01-06', end: '2025-01-13', period: 'week', tz: 'UTC' },
    selectedTrait: { trait_name: 'plan' },
  });
  if (!parsed.ok) throw new Error('bad controls');
  const response = chartResponseSchemas['user-composition'].parse(raw);
  return { kind: 'user-composition', response, raw, parsed: parsed.value };
}

function page(extra: Partial<PageInput> = {}): string {
  return buildPage(
    {
      title: 'Report',
      facts: [['Filters', `--user-where "plan = ${HOSTILE}"`]],
      charts: [
        {
          title: `Users by ${HOSTILE}`,
          command: `cas chart users --trait '${HOSTILE}'`,
          csvName: 'u.csv',
          view: usersView(),
        },
        { title: 'Broken', command: 'cas chart funnel', csvName: 'f.csv', error: `400: ${HOSTILE}` },
      ],
      ...extra,
    },
    LIBRARY,
  );
}

/** The text of `<script type="application/json" id="…">`. */
function block(html: string, id: string): unknown {
  const m = new RegExp(`<script type="application/json" id="${id}">(.*?)</script>`, 's').exec(html);
  if (!m) throw new Error(`no block ${id}`);
  return JSON.parse(m[1] ?? '');
}

describe('the report page', () => {
  it('carries stored text only inside escaped JSON blocks', () => {
    const html = page();
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toContain('__pwned=1</script>');
    // Every <script> is ours: the two inline scripts and the JSON blocks.
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts.filter((a) => a === '')).toHaveLength(2);
    expect(scripts.filter((a) => a !== '').every((a) => a?.startsWith(' type="application/json"'))).toBe(
      true,
    );
  });

  it("embeds the service's body exactly as received, and the chart's rows and CSV", () => {
    const html = page();
    expect(block(html, 'chart-data-0')).toEqual(usersView().raw);
    const table = block(html, 'chart-table-0') as { columns: string[]; rows: unknown[]; csv: string };
    expect(table.columns).toContain('label');
    expect(table.rows).toHaveLength(2);
    expect(table.csv.split('\n')[0]).toBe(table.columns.join(','));
    expect(block(html, 'chart-meta-1')).toMatchObject({ title: 'Broken', error: `400: ${HOSTILE}` });
    expect(html).not.toContain('id="chart-data-1"');
    expect(block(html, 'report-meta')).toEqual({
      title: 'Report',
      facts: [['Filters', `--user-where "plan = ${HOSTILE}"`]],
    });
  });

  it('allows no network and only its own scripts (by hash), prints on A4, follows the colour scheme', () => {
    const html = page();
    // The attribute as the browser reads it (entities decoded).
    const csp = (/http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1] ?? '').replaceAll(
      '&#39;',
      "'",
    );
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[^']+' 'sha256-[^']+'(;|$)/);
    expect(csp).not.toContain('unsafe-eval');
    expect(html).not.toMatch(/\bsrc=|<link/);
    expect(html).toContain('@page { size: A4');
    expect(html).toContain('prefers-color-scheme: dark');
    expect(html).toContain(`<script>${LIBRARY}</script>`);
  });
});

describe('ECharts options', () => {
  it('puts slice labels in data names (drawn as text), not in formatter templates', () => {
    const option = echartsOption(usersView());
    expect(JSON.stringify(option)).not.toContain('formatter');
    expect(option.series).toEqual([
      expect.objectContaining({
        type: 'pie',
        data: [
          { name: HOSTILE, value: 2 },
          { name: 'pro', value: 1 },
        ],
      }),
    ]);
  });

  it('draws slices that are all zero as an empty chart, not as equal shares', () => {
    const zero = (label: string) => ({ label, value: 0, percent: 0 });
    const option = echartsOption(usersView([zero('gold'), zero('silver')]));
    expect(option.series).toEqual([expect.objectContaining({ type: 'pie', data: [] })]);
  });
});
