import { runEvents, runProperties } from '../../commands/events.js';
import { unknownEventLine } from '../../commands/hint-lines.js';
import { runUserShow, runUsersList } from '../../commands/users.js';
import { renderEvents, renderProperties } from '../../render/events.js';
import type { ListingOptions } from '../../render/listing.js';
import { renderUserList, renderUserShow } from '../../render/users.js';
import { type Action, type CliContext, withConnection } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** `cas events`, `cas properties <event>`, `cas users list|show`. */

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function listingOptions(ctx: CliContext): ListingOptions {
  return {
    color: ctx.color,
    csv: { guard: ctx.flags.csvGuard !== false, terminal: ctx.isTty },
    width: ctx.width,
  };
}

export const events: Action = async (ctx) => {
  const result = await withConnection(ctx, (c) => runEvents({ like: text(ctx.flags.like) }, c));
  ctx.out(renderEvents(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const properties: Action = async (ctx, args) => {
  const result = await withConnection(ctx, (c) =>
    runProperties({ event: args[0] ?? '', top: text(ctx.flags.top) }, c),
  );
  ctx.out(renderProperties(result, ctx.format, listingOptions(ctx)));
  if (result.unknown) ctx.log(unknownEventLine(result.event, result.unknown.known));
  return EXIT.ok;
};

export const usersList: Action = async (ctx) => {
  const f = ctx.flags;
  const result = await withConnection(ctx, (c) =>
    runUsersList({ like: text(f.like), limit: text(f.limit), offset: text(f.offset) }, c),
  );
  ctx.out(renderUserList(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const usersShow: Action = async (ctx, args) => {
  const result = await withConnection(ctx, (c) =>
    runUserShow({ id: args[0] ?? '', sessions: text(ctx.flags.sessions) }, c),
  );
  ctx.out(renderUserShow(result.user, ctx.format, listingOptions(ctx), result.more));
  return EXIT.ok;
};
