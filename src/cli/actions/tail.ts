import { LiveSocketError } from '../../client/live-socket.js';
import type { Connection } from '../../commands/connect.js';
import { UsageError } from '../../commands/errors.js';
import { parseSince, runTail } from '../../commands/tail.js';
import { tailJsonLine, tailLine } from '../../render/tail-line.js';
import { type Action, withConnection } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** A flag's value; an empty one is refused, naming the flag: `--event ''` matched nothing, silently (found by probing). */
function text(value: unknown, flag: string): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.trim() === '') throw new UsageError(`${flag} must not be empty`);
  return value;
}

/** A socket that could not be kept, in the exit codes of cli.md. */
function socketExit(error: LiveSocketError): number {
  if (error.status === 401 || error.status === 403) return EXIT.auth;
  if (error.kind === 'unsupported') return EXIT.notFound;
  return error.kind === 'network' ? EXIT.network : EXIT.unavailable;
}

export const tail: Action = async (ctx) => {
  // One clock reading: an ISO --since is that instant, not a span re-read later (it slid by the
  // milliseconds between, and missed events of its first ones; found by probing).
  const now = Date.now();
  const sinceAt = now - parseSince(text(ctx.flags.since, '--since') ?? '10m', now);
  const events = Array.isArray(ctx.flags.event) ? ctx.flags.event.map((e) => text(e, '--event') ?? '') : [];
  const session = text(ctx.flags.session, '--session');
  const user = text(ctx.flags.user, '--user');
  // A terminal gets lines; a pipe (or --json) gets each frame as JSONL.
  const lines = ctx.format === 'table';
  return withConnection(ctx, async (connection) => {
    let follow = ctx.flags.follow !== false;
    if (follow && connection.mode === 'embedded') {
      // This process holds the data directory: nothing else can store events while it runs.
      ctx.log(
        'no cas serve runs over this data directory, so nothing new can arrive: printing the history only',
      );
      follow = false;
    }
    const options = {
      session,
      user,
      events,
      sinceAt,
      follow,
    };
    // A cas serve found through server.json may come back on another port: follow it there.
    const found: Connection[] = [];
    let endpoint = connection.client.endpoint;
    const refresh =
      connection.mode === 'local-server'
        ? async () => {
            const next = await ctx.findServer(endpoint);
            if (!next) return undefined;
            found.push(next);
            endpoint = next.client.endpoint;
            return next.client;
          }
        : undefined;
    try {
      for await (const frame of runTail(options, {
        client: connection.client,
        notice: ctx.log,
        refresh,
        retries: ctx.config.retries,
        timeoutMs: ctx.config.timeoutMs,
      })) {
        ctx.out(`${lines ? tailLine(frame, { color: ctx.color }) : tailJsonLine(frame)}\n`);
      }
    } catch (error) {
      if (!(error instanceof LiveSocketError)) throw error;
      ctx.warn(`cas: live events: ${error.message}`);
      return socketExit(error);
    } finally {
      await Promise.all(found.map((c) => c.close()));
    }
    return EXIT.ok;
  });
};
