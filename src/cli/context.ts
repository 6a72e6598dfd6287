import type { Config } from '../commands/config.js';
import type { Connection } from '../commands/connect.js';
import type { OutputFormat } from '../render/output.js';
import type { GlobalFlags } from './config.js';

/** What every action gets: resolved config, terminal facts, the output format, and a way to connect. */
export interface CliContext {
  config: Config;
  flags: Record<string, unknown> & GlobalFlags;
  format: OutputFormat;
  isTty: boolean;
  /** The terminal's width in columns, when stdout is a terminal that reports one. */
  width?: number;
  /** Stderr is a terminal (progress spinners go there). */
  isErrTty: boolean;
  color: boolean;
  out(text: string): void;
  /** A line on stderr, unless --quiet. */
  log(line: string): void;
  /** A line on stderr even with --quiet (errors, rejections). */
  warn(line: string): void;
  connect(): Promise<Connection>;
  /**
   * The `cas serve` holding the data directory now, if one proves it is and it is not the one at
   * `endpoint` (never the embedded service): commands/connect.ts `findMovedServer`.
   */
  findServer(endpoint: string): Promise<Connection | undefined>;
}

export type Action = (ctx: CliContext, args: string[]) => Promise<number>;

/** Runs `fn` with a connection and always closes it (the embedded service included). */
export async function withConnection<T>(
  ctx: CliContext,
  fn: (connection: Connection) => Promise<T>,
): Promise<T> {
  const connection = await ctx.connect();
  try {
    return await fn(connection);
  } finally {
    await connection.close();
  }
}
