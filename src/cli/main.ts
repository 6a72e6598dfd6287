import { existsSync } from 'node:fs';
import { CommanderError } from 'commander';
import type { Config } from '../commands/config.js';
import { UsageError } from '../commands/errors.js';
import { importNeedsOwnThread } from '../commands/import-thread.js';
import { escapeControls } from '../render/terminal-text.js';
import { classifyDataDirError, DataDirError, storageRefusalOf } from '../service/lock-error.js';
import { applyV8Flags } from '../shared/v8-flags.js';
import { ACTIONS } from './actions/index.js';
import { wantsColor } from './color.js';
import type { GlobalFlags } from './config.js';
import type { CliContext } from './context.js';
import { releaseEarlySignals } from './early-signals.js';
import { describeFailure, EXIT, localKeyHint, outputProblem } from './exit-codes.js';
import { helpOfUnknown } from './help-unknown.js';
import { buildProgram } from './program.js';

/**
 * SIGINT/SIGTERM for commands without a handler of their own (import saves its checkpoint, serve
 * finishes its requests: they listen too, and then this stays out of the way). Quitting closes the
 * embedded service first: exiting while DuckDB is inside a native call aborts the process (exit 134).
 * The command may meanwhile finish or fail against the closing service: neither its output nor its
 * error is shown, only "interrupted" and exit 130.
 */
let quitting: Promise<never> | undefined;

async function quit(): Promise<never> {
  const { closeEmbeddedServices } = await import('../service/embedded.js');
  await closeEmbeddedServices();
  process.exit(EXIT.interrupted);
}

function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  // A second signal quits at once, as import's does.
  if (quitting) process.exit(EXIT.interrupted);
  process.stderr.write('cas: interrupted\n');
  quitting = quit();
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// After adding ours: a signal with no listener left for a moment is dropped, not delivered to the next.
releaseEarlySignals();

/**
 * Whether the command will start the embedded service on a thread of its own when no endpoint is set
 * and no `cas serve` holds the data directory: only an import of more than a few MB does
 * (import-thread.ts). The thread then loads the service's code while this one loads the command's
 * (connect.ts decides for real later; a wrong guess costs only CPU on another core).
 */
function startsServiceThread(name: string, flags: Record<string, unknown>, args: string[]): boolean {
  return name === 'import' && flags.dryRun !== true && importNeedsOwnThread(args);
}

/**
 * `--json` with an output `--format` other than json asks for two outputs; it printed JSON without a
 * word (found by probing). `cas import`'s `--format` is its input's, so it goes with `--json`.
 */
function refuseTwoOutputs(name: string, flags: Record<string, unknown> & GlobalFlags): void {
  const { format } = flags;
  if (name === 'import' || flags.json !== true || typeof format !== 'string' || format === 'json') return;
  throw new UsageError(`--json and --format ${format} ask for different outputs: give one of them`);
}

async function dispatch(
  name: string,
  flags: Record<string, unknown> & GlobalFlags,
  args: string[],
): Promise<number> {
  const [{ resolveConfig }, { serverFilePath }] = await Promise.all([
    import('./config.js'),
    import('../service/data-dir.js'),
  ]);
  const config = resolveConfig(flags, process.env);
  refuseTwoOutputs(name, flags);
  if (
    startsServiceThread(name, flags, args) &&
    config.endpoint === undefined &&
    !existsSync(serverFilePath(config.dataDir))
  ) {
    const embedded = await import('../service/embedded.js');
    embedded.prewarmEmbeddedService();
    try {
      return await act(name, flags, args, config);
    } finally {
      // A command that never connected (a usage error, say) leaves the thread: end it safely.
      await embedded.releaseWarmService();
    }
  }
  return act(name, flags, args, config);
}

async function act(
  name: string,
  flags: Record<string, unknown> & GlobalFlags,
  args: string[],
  config: Config,
): Promise<number> {
  const [{ chooseFormat }, { connect, findMovedServer }] = await Promise.all([
    import('../render/output.js'),
    import('../commands/connect.js'),
  ]);
  const isTty = process.stdout.isTTY === true;
  // Log lines quote files, servers and stored values: nothing in them may act on the terminal.
  const warn = (line: string) => process.stderr.write(`${escapeControls(line)}\n`);
  const log = (line: string) => {
    if (!config.quiet) warn(line);
  };
  const ctx: CliContext = {
    config,
    flags,
    format: chooseFormat({ json: flags.json === true, format: flags.format as string | undefined }, isTty),
    isTty,
    ...(isTty && (process.stdout.columns ?? 0) > 0 ? { width: process.stdout.columns } : {}),
    isErrTty: process.stderr.isTTY === true,
    color: wantsColor(isTty, flags.color, process.env),
    out: (text) => {
      if (quitting === undefined) process.stdout.write(text);
    },
    log,
    warn,
    connect: () => connect(config, { log }),
    findServer: (endpoint) => findMovedServer(config, { log }, endpoint),
  };
  const load = ACTIONS[name];
  if (!load) throw new Error(`no action for command ${name}`);
  const action = await load();
  try {
    return await action(ctx, args);
  } catch (error) {
    throw inDataDir(error, config);
  }
}

/** A system error on a file of the data directory (server.json, a checkpoint) names the directory. */
function inDataDir(error: unknown, config: Config): unknown {
  const { dataDir } = config;
  const storage = config.endpoint === undefined ? storageRefusalOf(error) : undefined;
  // The service over this directory (embedded, or a cas serve found by server.json) could not write
  // it: said as a failure to open it is (README), not as "503 from POST …" (found by probing).
  if (storage !== undefined) return new DataDirError(storage, dataDir, 'nothing of that request was stored');
  const path = (error as { path?: unknown } | null)?.path;
  if (typeof path !== 'string' || !(path === dataDir || path.startsWith(`${dataDir}/`))) return error;
  return classifyDataDirError(error, dataDir) ?? error;
}

/**
 * Where the key of a refused command came from, when that explains the refusal (exit-codes.ts).
 * Loaded only then: the config file's schemas stay out of `--help` and `--version` (test/startup).
 */
async function authSourceHint(flags: GlobalFlags): Promise<string | undefined> {
  try {
    const { configSources } = await import('./config-sources.js');
    return localKeyHint(configSources(flags, process.env));
  } catch {
    return undefined;
  }
}

export async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  let verbose = argv.includes('-v') || argv.includes('--verbose');
  let given: GlobalFlags | undefined;
  const program = buildProgram(async (name, flags, args) => {
    given = flags;
    verbose = flags.verbose === true;
    exitCode = await dispatch(name, flags, args);
  });
  try {
    await program.parseAsync(helpOfUnknown(program, argv));
    return quitting ?? exitCode;
  } catch (error) {
    if (quitting) return quitting;
    if (error instanceof CommanderError) {
      // Commander has already printed its message (it names the flag); help and version exit 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const failure = describeFailure(error);
    if (failure.code === EXIT.auth && given !== undefined) {
      const hint = await authSourceHint(given);
      if (hint !== undefined) failure.hint = hint;
    }
    process.stderr.write(`cas: ${bounded(escapeControls(failure.message, { oneLine: true }))}\n`);
    if (failure.hint)
      process.stderr.write(`  hint: ${bounded(escapeControls(failure.hint, { oneLine: true }))}\n`);
    // cli.md: a stack only for an unexpected error (exit 1): a usage error's or a refusal's says nothing more.
    if (verbose && failure.code === EXIT.unexpected && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    return failure.code;
  }
}

applyV8Flags();

// A reader that goes away (`cas ... | head`) is not an error of ours: stop quietly. Any other failure
// to write stdout (a full disk) is: it exited 0 with nothing written, `keys create`'s one-time secret
// included (found by probing).
let outputFailed: NodeJS.ErrnoException | undefined;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (stream === process.stdout) outputFailed ??= error;
  });
}

/** The exit code, unless stdout could not be written: then exit 5, saying so on stderr. */
function checkedExit(code: number): never {
  // The stream's 'error' event may come after the last write's callback.
  const failed = outputFailed ?? (process.stdout.errored as NodeJS.ErrnoException | null) ?? undefined;
  if (failed === undefined || failed.code === 'EPIPE') process.exit(code);
  process.stderr.write(`cas: ${outputProblem(failed)}\n`);
  process.exit(code === EXIT.ok ? EXIT.unavailable : code);
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
    // Exit promptly (the embedded service and sockets are closed by now), but only once stdout has
    // drained: a pipe may still hold megabytes of output that process.exit would cut short.
    process.stdout.write('', () => checkedExit(code));
  },
  (error: unknown) => {
    process.stderr.write(`cas: ${String(error)}\n`);
    process.exit(EXIT.unexpected);
  },
);

/** A message quoting a 100 KB flag value was a 100 KB line (found by probing): its middle is left out. */
function bounded(line: string, max = 2_000): string {
  if (line.length <= max) return line;
  return `${line.slice(0, max - 500)} … (${line.length - max + 100} characters left out) … ${line.slice(-400)}`;
}
