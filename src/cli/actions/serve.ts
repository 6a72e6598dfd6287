import { UsageError } from '../../commands/errors.js';
import { runServe } from '../../commands/serve.js';
import type { Action } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { limitsFromFlags } from '../serve-limits.js';
import { readOptionsFromFlags } from '../serve-read-options.js';

export const serve: Action = async (ctx) => {
  // It was ignored without a word (found by probing); CAS_ENDPOINT, set for the other commands, is.
  if (ctx.flags.endpoint !== undefined) {
    throw new UsageError(
      'cas serve runs the service itself: --endpoint names a service for the other commands to talk to',
    );
  }
  // Everything this process creates is the store's (database, WAL, spill files, server.json): private
  // from the first byte, where a chmod afterwards would leave a moment in which others could open it.
  process.umask(0o077);
  const handle = await runServe(
    {
      host: String(ctx.flags.host),
      port: Number(ctx.flags.port),
      wsPort: ctx.flags.wsPort === undefined ? undefined : Number(ctx.flags.wsPort),
      dataDir: ctx.config.dataDir,
      apiKey: ctx.config.apiKey,
      project: ctx.config.projectId,
      provisionFlag: ctx.flags.apiKey !== undefined || ctx.flags.project !== undefined,
      intents: typeof ctx.flags.intents === 'string' ? ctx.flags.intents : undefined,
      prices: typeof ctx.flags.prices === 'string' ? ctx.flags.prices : undefined,
      limits: limitsFromFlags(ctx.flags),
      ...readOptionsFromFlags(ctx.flags),
    },
    { log: ctx.log },
  );
  const { info } = handle;
  if (ctx.format === 'table') {
    ctx.out(
      `cas service listening on ${info.url}${info.ws_url ? ` (live-event sockets also on ${info.ws_url})` : ''}\n  api key:  ${info.api_key}\n  project:  ${info.project_id}\n  data dir: ${info.data_dir}\nCtrl-C stops it.\n`,
    );
  } else {
    ctx.out(`${JSON.stringify(info)}\n`);
  }
  await handle.stopped;
  return EXIT.ok;
};
