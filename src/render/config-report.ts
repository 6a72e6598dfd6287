import Table from 'cli-table3';
import type { ConfigReport } from '../commands/config-report.js';
import { type CsvOptions, csvCell, DEFAULT_CSV, json, jsonLine, type OutputFormat } from './output.js';
import { escapeControls } from './terminal-text.js';

/**
 * `cas config` as a table (setting, value, where it came from) or the report as JSON. The key's row
 * says only whether one is set: the report holds no key to print.
 */

function rows(report: ConfigReport): Array<[string, string, string]> {
  const shown = (value: string | null, none: string) => value ?? none;
  return [
    ['endpoint', shown(report.endpoint.value, '(none: local)'), report.endpoint.from],
    ['project', shown(report.project.value, '(none)'), report.project.from],
    [
      'api key',
      report.api_key.set ? '(set)' : report.mode === 'local' ? '(local)' : '(none)',
      report.api_key.from,
    ],
    ['data dir', shown(report.data_dir.value, ''), report.data_dir.from],
    [
      'profile',
      shown(report.profile.value, ''),
      report.profile.in_config_file || report.profile.source?.kind === 'default'
        ? report.profile.from
        : `${report.profile.from}; not in the config file`,
    ],
    ['config file', report.config_file, ''],
  ];
}

export function renderConfigReport(
  report: ConfigReport,
  format: OutputFormat,
  options: { color: boolean; csv?: CsvOptions },
): string {
  if (format === 'json') return json(report);
  if (format === 'jsonl') return `${jsonLine(report)}\n`;
  if (format === 'csv') {
    const csv = options.csv ?? DEFAULT_CSV;
    const line = (cells: string[]) => cells.map((c) => csvCell(c, csv)).join(',');
    return `${[line(['setting', 'value', 'from']), ...rows(report).map(line)].join('\n')}\n`;
  }
  const table = new Table({
    head: ['setting', 'value', 'from'],
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
  });
  // Paths and URLs come from the environment and files: escaped like stored text.
  for (const row of rows(report)) table.push(row.map((cell) => escapeControls(cell)));
  return `${table.toString()}\n`;
}
