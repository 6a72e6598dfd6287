import { runAlias, runIdentify } from '../../commands/identify.js';
import { renderRecord } from '../../render/output.js';
import { type Action, withConnection } from '../context.js';
import { EXIT } from '../exit-codes.js';

export const identify: Action = async (ctx) => {
  const record = await withConnection(ctx, (c) =>
    runIdentify(ctx.flags as Parameters<typeof runIdentify>[0], c),
  );
  ctx.out(renderRecord(record, ctx.format, { color: ctx.color, csv: { guard: true, terminal: ctx.isTty } }));
  return EXIT.ok;
};

export const alias: Action = async (ctx) => {
  const record = await withConnection(ctx, (c) => runAlias(ctx.flags as Parameters<typeof runAlias>[0], c));
  ctx.out(renderRecord(record, ctx.format, { color: ctx.color, csv: { guard: true, terminal: ctx.isTty } }));
  return EXIT.ok;
};
