import { connect } from '../../commands/connect.js';
import { runReprice } from '../../commands/reprice.js';
import { renderReprice } from '../../render/reprice.js';
import type { Action } from '../context.js';
import { EXIT } from '../exit-codes.js';

export const reprice: Action = async (ctx) => {
  const flags = ctx.flags as { from?: string; to?: string; prices?: string };
  // Not ctx.connect(): `--prices` picks the table of the embedded service this command starts.
  const connection = await connect(ctx.config, { log: ctx.log, prices: flags.prices });
  try {
    const result = await runReprice(flags, { client: connection.client });
    ctx.out(
      renderReprice(result, ctx.format, {
        color: ctx.color,
        csv: { guard: ctx.flags.csvGuard !== false, terminal: ctx.isTty },
      }),
    );
    return EXIT.ok;
  } finally {
    await connection.close();
  }
};
