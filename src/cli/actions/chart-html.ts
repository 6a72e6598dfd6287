import type { ChartResult } from '../../commands/chart.js';
import type { ChartFlags } from '../../commands/chart-flags.js';
import type { Connection } from '../../commands/connect.js';
import { chartArgv, shellLine } from '../../commands/report-charts.js';
import { chartLibrary } from '../../render/html/chart-library.js';
import { buildPage } from '../../render/html/page.js';
import { withoutPassword } from '../../shared/url-password.js';
import type { CliContext } from '../context.js';

/** `cas chart ... --format html` (one chart as `cas report` draws it) and the header both share. */

/** Where the data comes from, for a page's header. */
export function sourceOf(ctx: CliContext, connection: Connection): string {
  const { endpoint, dataDir, projectId } = ctx.config;
  const project = projectId !== undefined ? `, project ${projectId}` : '';
  if (connection.mode === 'remote')
    return `${endpoint === undefined ? 'remote service' : withoutPassword(endpoint)}${project}`;
  if (connection.mode === 'local-server') return `the cas serve running over ${dataDir}`;
  return `the embedded service over ${dataDir}`;
}

export function chartPage(
  result: ChartResult,
  flags: ChartFlags,
  context: { now: Date; source: string },
): string {
  const argv = chartArgv(result.chart, flags);
  const { range } = result.parsed;
  return buildPage(
    {
      title: `cas chart ${result.chart}`,
      facts: [
        ['Range', `${range.start} to ${range.end} (end excluded), by ${range.period}`],
        ['Time zone', range.tz],
        ['Data source', context.source],
        ['Made', context.now.toISOString()],
      ],
      charts: [
        {
          title: result.chart,
          command: `cas chart ${shellLine(argv)}`,
          csvName: `${result.chart}.csv`,
          view: result,
        },
      ],
    },
    chartLibrary(),
  );
}
