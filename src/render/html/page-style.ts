/**
 * The page's CSS: light by default, dark under `prefers-color-scheme: dark` (the script picks the
 * matching ECharts theme), and print on A4 with each chart kept on one page and every table shown,
 * since a printed page has no toggle to open.
 */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1f24; --muted: #59636e; --card: #f6f8fa;
  --line: #d0d7de; --accent: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --card: #161b22; --line: #30363d; --accent: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
header, main { max-width: 1400px; margin: 0 auto; padding: 16px 24px; }
main { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 20px; }
header h1 { margin: 8px 0 4px; font-size: 1.6rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0; color: var(--muted); }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
section.chart { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px;
  min-width: 0; break-inside: avoid; page-break-inside: avoid; }
section.chart h2 { margin: 0; font-size: 1.15rem; }
.command { margin: 2px 0 8px; color: var(--muted); font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace;
  overflow-wrap: anywhere; }
.plot { width: 100%; height: 340px; }
.error { color: #cf222e; white-space: pre-wrap; }
.actions { display: flex; gap: 8px; margin-top: 8px; }
button { font: inherit; font-size: 0.85rem; color: var(--fg); background: var(--bg); border: 1px solid var(--line);
  border-radius: 6px; padding: 3px 10px; cursor: pointer; }
button:hover { border-color: var(--accent); }
.table-wrap { overflow-x: auto; max-height: 420px; margin-top: 8px; }
.table-wrap.collapsed { display: none; }
table { border-collapse: collapse; font-size: 0.8rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: 2px 8px; text-align: left; white-space: nowrap; }
td.num { text-align: right; }
footer { max-width: 1400px; margin: 0 auto; padding: 8px 24px 24px; color: var(--muted); font-size: 0.8rem; }
@page { size: A4; margin: 14mm; }
@media print {
  :root { --bg: #ffffff; --fg: #000000; --muted: #444444; --card: #ffffff; --line: #bbbbbb; }
  body { font-size: 11px; }
  header, main, footer { max-width: none; padding: 0; }
  main { display: block; }
  section.chart { margin: 0 0 12px; }
  .actions { display: none; }
  .plot { height: 300px; }
  .table-wrap, .table-wrap.collapsed { display: block; max-height: none; overflow: visible; }
  section.chart { border-color: #bbbbbb; }
}
`;
