import { rowsToCsv } from '../chart-format.js';
import { type ChartView, flatChart } from '../chart-output.js';
import { DEFAULT_CSV } from '../output.js';
import { echartsOption } from './echarts-options.js';
import { assertInlineable, escapeHtml, jsonForScript, scriptHash } from './escape.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/**
 * One self-contained HTML page of charts (`cas report`, `cas chart --format html`). The markup holds
 * only our own fixed text; everything that comes from data or flags travels as JSON blocks (escaped
 * by `jsonForScript`) that the page script reads and shows with `textContent`. Per chart: the
 * service's body exactly as received (`chart-data-N`), the ECharts option drawn from it, and the rows
 * and CSV of `cas chart --format csv`. A CSP allows no network at all and only the page's two inline
 * scripts, by hash.
 */

export interface PageChart {
  title: string;
  /** The `cas chart` command that gives the same chart, shown under its title. */
  command: string;
  /** File name offered by the CSV download. */
  csvName: string;
  view?: ChartView | undefined;
  /** Why the chart is missing, when it could not be fetched. */
  error?: string | undefined;
}

export interface PageInput {
  title: string;
  /** Label → value lines of the header: range, time zone, filters, data source, made at. */
  facts: ReadonlyArray<readonly [string, string]>;
  charts: readonly PageChart[];
}

function jsonBlock(id: string, value: unknown): string {
  return `<script type="application/json" id="${escapeHtml(id)}">${jsonForScript(value)}</script>`;
}

function chartSection(chart: PageChart, index: number): string {
  const blocks = [
    jsonBlock(`chart-meta-${index}`, {
      title: chart.title,
      command: chart.command,
      csvName: chart.csvName,
      ...(chart.error !== undefined ? { error: chart.error } : {}),
    }),
  ];
  if (chart.view === undefined || chart.error !== undefined) {
    return `<section class="chart" data-index="${index}">
<h2></h2><p class="command"></p><p class="error"></p>
${blocks.join('\n')}
</section>`;
  }
  const { columns, rows } = flatChart(chart.view);
  blocks.push(
    jsonBlock(`chart-data-${index}`, chart.view.raw),
    jsonBlock(`chart-option-${index}`, echartsOption(chart.view)),
    jsonBlock(`chart-table-${index}`, { columns, rows, csv: rowsToCsv(columns, rows, DEFAULT_CSV) }),
  );
  return `<section class="chart" data-index="${index}" data-kind="${escapeHtml(chart.view.kind)}" data-plot>
<h2></h2><p class="command"></p>
<div class="plot" role="img"></div>
<div class="actions"><button type="button" class="toggle" aria-expanded="false">Show table</button><button type="button" class="csv">Download CSV</button></div>
<div class="table-wrap collapsed"></div>
${blocks.join('\n')}
</section>`;
}

/** The page, with `library` (ECharts' minified build) inlined. */
export function buildPage(input: PageInput, library: string): string {
  const lib = assertInlineable(library, 'the chart library');
  const csp = [
    "default-src 'none'",
    `script-src ${scriptHash(lib)} ${scriptHash(PAGE_SCRIPT)}`,
    "style-src 'unsafe-inline'",
    'img-src data: blob:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>cas report</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header><h1></h1><dl class="meta"></dl></header>
<main>
${input.charts.map(chartSection).join('\n')}
</main>
<footer>Made by cas. Charts drawn with Apache ECharts, inlined: this page makes no network requests.</footer>
${jsonBlock('report-meta', { title: input.title, facts: input.facts })}
<script>${lib}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
