/**
 * The page's one script of ours (plain ES2017, no build step). It reads each chart's JSON blocks and
 * sets every piece of text with `textContent`, never `innerHTML`, so stored text stays text. The
 * ECharts theme follows the system's colour scheme, including a change while the page is open, and
 * charts are drawn as SVG (crisp in print, and countable marks for the browser test).
 */
export const PAGE_SCRIPT = `(function () {
  'use strict';
  function readJson(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent || 'null') : null;
  }
  function text(selector, value, root) {
    var node = (root || document).querySelector(selector);
    if (node) node.textContent = value;
  }
  function element(tag, className, value) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (value !== undefined) node.textContent = value;
    return node;
  }

  var meta = readJson('report-meta');
  document.title = meta.title;
  text('header h1', meta.title);
  var list = document.querySelector('dl.meta');
  meta.facts.forEach(function (fact) {
    list.appendChild(element('dt', '', fact[0]));
    list.appendChild(element('dd', '', fact[1]));
  });

  var dark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  var drawn = [];

  function draw() {
    drawn.forEach(function (d) { d.chart.dispose(); });
    drawn = [];
    var theme = dark && dark.matches ? 'dark' : null;
    document.querySelectorAll('section.chart[data-plot]').forEach(function (section) {
      var option = readJson('chart-option-' + section.dataset.index);
      option.backgroundColor = 'transparent';
      var chart = echarts.init(section.querySelector('.plot'), theme, { renderer: 'svg' });
      chart.setOption(option);
      drawn.push({ chart: chart, section: section });
    });
  }

  function table(data) {
    var t = element('table');
    var head = t.createTHead().insertRow();
    data.columns.forEach(function (c) { head.appendChild(element('th', '', c)); });
    var body = t.createTBody();
    data.rows.forEach(function (row) {
      var tr = body.insertRow();
      data.columns.forEach(function (c) {
        var v = row[c];
        tr.appendChild(element('td', typeof v === 'number' ? 'num' : '', v === undefined || v === null ? '' : String(v)));
      });
    });
    return t;
  }

  function download(name, csv) {
    var url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
    var a = element('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }

  document.querySelectorAll('section.chart').forEach(function (section) {
    var i = section.dataset.index;
    var info = readJson('chart-meta-' + i);
    text('h2', info.title, section);
    text('.command', info.command, section);
    if (info.error) {
      text('.error', info.error, section);
      return;
    }
    var data = readJson('chart-table-' + i);
    var wrap = section.querySelector('.table-wrap');
    wrap.appendChild(table(data));
    var toggle = section.querySelector('button.toggle');
    toggle.addEventListener('click', function () {
      var open = wrap.classList.toggle('collapsed') === false;
      toggle.textContent = open ? 'Hide table' : 'Show table';
      toggle.setAttribute('aria-expanded', String(open));
    });
    section.querySelector('button.csv').addEventListener('click', function () {
      download(info.csvName, data.csv);
    });
  });

  draw();
  if (dark && dark.addEventListener) dark.addEventListener('change', draw);
  window.addEventListener('resize', function () { drawn.forEach(function (d) { d.chart.resize(); }); });
  // Printing lays the page out at A4 width: charts are resized to it, and back afterwards.
  window.addEventListener('beforeprint', function () { drawn.forEach(function (d) { d.chart.resize(); }); });
  window.addEventListener('afterprint', function () { drawn.forEach(function (d) { d.chart.resize(); }); });
  window.__casReport = { charts: drawn };
})();
`;
