import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import ora, { type Ora } from 'ora';
import { type Connection, checkPriceFile, connect, findMovedServer } from '../../commands/connect.js';
import { InterruptedError } from '../../commands/errors.js';
import { type ImportFlags, runImport, summarize } from '../../commands/import.js';
import { importNeedsOwnThread } from '../../commands/import-thread.js';
import { type ImportStats, newStats } from '../../importer/pipeline.js';
import {
  alreadyStored,
  endingLine,
  endingWorthSaying,
  progressLine,
  RERUN_WITHOUT_CHECKPOINT,
  renderImportSummary,
} from '../../render/import-summary.js';
import { json } from '../../render/output.js';
import { wantsColor } from '../color.js';
import type { Action, CliContext } from '../context.js';
import { describeFailure, EXIT } from '../exit-codes.js';

/** Off a terminal, a plain progress line this often (cli.md: "every few seconds"). */
const PLAIN_EVERY_MS = 5000;

interface Progress {
  start(info: { totalBytes: number | undefined }): void;
  /** Writes a line to stderr without tearing the spinner. */
  line(text: string): void;
  /** For good: a later `start` (an interruption before the run began) shows nothing. */
  stop(): void;
}

function progress(ctx: CliContext, stats: ImportStats, dryRun: boolean): Progress {
  let totalBytes: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let spinner: Ora | undefined;
  let stopped = false;
  const text = (columns?: number) => {
    const info = { totalBytes, elapsedMs: Date.now() - stats.phaseStartedAt, dryRun };
    return progressLine(stats, columns === undefined ? info : { ...info, columns });
  };
  // One line that fits (the spinner and a space take 2 columns): a wrapped spinner line leaves copies
  // behind, and a terminal that reports no width (0 columns, as some pseudo-terminals do) makes ora
  // clear lines forever.
  const columns = process.stderr.columns ?? 0;
  const fitted = () => text(columns - 3);
  return {
    start(info) {
      totalBytes = info.totalBytes;
      if (ctx.config.quiet || stopped) return;
      if (ctx.isErrTty && columns >= 40) {
        // chalk, under ora, reads --no-color from argv but not NO_COLOR (found by probing).
        const color = wantsColor(ctx.isErrTty, ctx.flags.color, process.env) ? 'cyan' : false;
        spinner = ora({ text: fitted(), stream: process.stderr, color, discardStdin: false }).start();
        timer = setInterval(() => {
          if (spinner) spinner.text = fitted();
        }, 200);
      } else {
        timer = setInterval(() => ctx.log(text()), PLAIN_EVERY_MS);
      }
      timer.unref();
    },
    line(line) {
      if (spinner?.isSpinning) {
        spinner.clear();
        ctx.warn(line);
        spinner.render();
      } else {
        ctx.warn(line);
      }
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      spinner?.stop();
    },
  };
}

/**
 * The shared connect(), with the client's retries counted for the summary; its lines (`-v`'s among
 * them) go through `say`, which clears the progress spinner first.
 */
function connectCountingRetries(
  ctx: CliContext,
  stats: ImportStats,
  paths: readonly string[],
  say: (line: string) => void,
  signal: AbortSignal,
) {
  const prices = typeof ctx.flags.prices === 'string' ? ctx.flags.prices : undefined;
  const thread = importNeedsOwnThread(paths);
  const onRetry = (): void => {
    stats.retries++;
  };
  return connect(ctx.config, { log: say, onRetry, prices, workload: 'import', thread, signal });
}

/** Where an import's `cas serve` went (findMovedServer), its retries counted and its move said. */
async function movedServer(
  ctx: CliContext,
  stats: ImportStats,
  say: (line: string) => void,
  used: Pick<Connection, 'client' | 'mode'>,
): Promise<Connection | undefined> {
  if (used.mode !== 'local-server') return undefined;
  const onRetry = (): void => {
    stats.retries++;
  };
  const next = await findMovedServer(ctx.config, { log: say, onRetry }, used.client.endpoint);
  if (!next) return undefined;
  say(`cas: the service moved to ${next.client.endpoint}; sending there`);
  return next;
}

export const importAction: Action = async (ctx, args) => {
  const flags = ctx.flags as ImportFlags & { json?: boolean };
  const format = flags.json === true || !ctx.isTty ? 'json' : 'table';
  const dryRun = flags.dryRun === true;
  // "--dry-run validates and maps everything" (cli.md): --prices too, which connect() checks otherwise.
  if (dryRun && typeof ctx.flags.prices === 'string') await checkPriceFile(ctx.flags.prices);
  const stats = newStats();
  const startedAt = Date.now();
  const controller = new AbortController();
  // Every request in flight listens to this signal until it ends (up to --concurrency, 16 into a
  // `cas serve`): past Node's default of 10 it printed a MaxListenersExceededWarning, though none leaks.
  setMaxListeners(0, controller.signal);
  const byEvent: Record<string, number> = {};
  let checkpointLost: string | undefined;
  // `cas import ... --dry-run --json | head`: the reader went away on purpose; stop quietly.
  let stdoutClosed = false;
  // Dry-run events are written in blocks: one write per event costs a third of the run on a pipe.
  let pending = '';
  const flushOut = (): void => {
    if (pending !== '' && !stdoutClosed) ctx.out(pending);
    pending = '';
  };
  const onStdoutError = (): void => {
    stdoutClosed = true;
    controller.abort(new InterruptedError('stdout closed'));
  };
  process.stdout.on('error', onStdoutError);
  const show = progress(ctx, stats, dryRun);
  const onSignal = (signal: NodeJS.Signals): void => {
    // A second Ctrl-C reaches main.ts, which stops the embedded service safely and exits 130 at once;
    // the checkpoint on disk is the last one written (still valid).
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // No progress after this: winding down (a read helper, the checkpoint) may outlast a progress tick,
    // and off a terminal the lines after an interruption are only the interruption's own.
    show.stop();
    // A SIGTERM from a service manager is no Ctrl-C (found by probing).
    const again = signal === 'SIGINT' ? 'Ctrl-C again' : `${signal} again`;
    // Stdin keeps no checkpoint: "saving the checkpoint" promised one (found by probing).
    const saving = args.includes('-') || checkpointLost !== undefined ? 'stopping' : 'saving the checkpoint';
    ctx.warn(`cas: interrupted; ${saving} (${again} to quit at once)`);
    controller.abort(new InterruptedError());
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const result = await runImport(args, flags, {
      connect: () =>
        connectCountingRetries(
          ctx,
          stats,
          args,
          (line) => {
            if (!ctx.config.quiet) show.line(line);
          },
          controller.signal,
        ),
      refresh: (used) =>
        movedServer(ctx, stats, (line) => (ctx.config.quiet ? undefined : show.line(line)), used),
      dataDir: ctx.config.dataDir,
      target: {
        // The checkpoint lives in the data directory itself: naming it by its path lost it to a move,
        // a rename or a symlink (found by probing), and a copy is told apart by its witnesses.
        endpoint: ctx.config.endpoint ?? 'embedded',
        project: ctx.config.projectId ?? 'local',
      },
      stats,
      onCheckpointLost: (reason) => {
        checkpointLost = reason;
      },
      warn: (line) => show.line(line),
      note: (line) => {
        if (!ctx.config.quiet) show.line(line);
      },
      // Not the system's temp folder, which is often memory (tmpfs): a big sort spills next to the checkpoints.
      tmpDir: join(ctx.config.dataDir, 'imports'),
      onEvent: (event) => {
        if (format === 'json') {
          pending += `${JSON.stringify(event)}\n`;
          if (pending.length > 1 << 16) flushOut();
        }
        const name = String(event.event ?? event.type);
        byEvent[name] = (byEvent[name] ?? 0) + 1;
      },
      onStart: (info) => show.start(info),
      signal: controller.signal,
      stdin: process.stdin,
    });
    show.stop();
    flushOut();
    if (stdoutClosed) return EXIT.ok;
    if (dryRun && format === 'json') {
      // stdout holds the events; the summary goes to stderr so the JSONL stays clean.
      ctx.log(JSON.stringify(result.summary));
    } else {
      ctx.out(renderImportSummary({ ...result, byEvent, checkpointLost }, format, { color: ctx.color }));
    }
    if (format === 'json' && endingWorthSaying(result))
      ctx.warn(`cas: ${endingLine({ ...result, checkpointLost })}`);
    // main.ts exits right after the action; on a pipe, stdout may still hold megabytes of events.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
    if (result.end === 'interrupted') return EXIT.interrupted;
    return result.summary.rejected > 0 ? EXIT.rejected : EXIT.ok;
  } catch (error) {
    // A run the service stopped (its key refused, busy past the retries, unreachable) said only the
    // failure: what was stored, and that the same command resumes, went unsaid (found by probing).
    show.stop();
    if (!dryRun && stats.batches > 0) {
      // --json promises the summary (cli.md): a run the service stopped left stdout empty, though it
      // had stored events (found by probing).
      if (format === 'json') {
        const summary = {
          ...summarize(stats, startedAt, 'interrupted'),
          error: describeFailure(error).message,
        };
        ctx.out(json(summary));
      }
      const fromStdin = args.includes('-');
      ctx.warn(
        `cas: stopped after ${stats.accepted.toLocaleString('en')} events were stored (${alreadyStored(stats).toLocaleString('en')} already there) of ${stats.records.toLocaleString('en')} records read; ${resumeHint(fromStdin, checkpointLost)}`,
      );
    }
    throw error;
  } finally {
    flushOut();
    show.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.stdout.off('error', onStdoutError);
  }
};

/** What running a stopped import again does: resume from its checkpoint, or send everything again. */
function resumeHint(fromStdin: boolean, checkpointLost: string | undefined): string {
  if (fromStdin)
    return 'input from stdin keeps no checkpoint: run it again to send what is missing (nothing is stored twice)';
  if (checkpointLost !== undefined)
    return `no checkpoint could be saved (${checkpointLost}): ${RERUN_WITHOUT_CHECKPOINT}`;
  return 'the checkpoint is saved: run the same command again to resume';
}
