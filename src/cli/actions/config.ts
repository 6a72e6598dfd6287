import { runConfigReport } from '../../commands/config-report.js';
import { renderConfigReport } from '../../render/config-report.js';
import { inspectServerFile, readCredentials } from '../../service/data-dir.js';
import { configSources } from '../config-sources.js';
import type { Action } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** `cas config`: reads files only; connects to nothing and creates nothing. */
export const config: Action = async (ctx) => {
  const report = runConfigReport(
    { config: ctx.config, sources: configSources(ctx.flags, process.env) },
    {
      localProject: (dir) => readCredentials(dir)?.project_id,
      localServer: (dir) => {
        const state = inspectServerFile(dir);
        return state.kind === 'valid' ? state.file.url : undefined;
      },
    },
  );
  ctx.out(
    renderConfigReport(report, ctx.format, {
      color: ctx.color,
      csv: { guard: ctx.flags.csvGuard !== false, terminal: ctx.isTty },
    }),
  );
  return EXIT.ok;
};
