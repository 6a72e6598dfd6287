import { CommanderError } from 'commander';
import type { GlobalFlags } from './config.js';
import { describeFailure, EXIT } from './exit-codes.js';
import { buildProgram } from './program.js';

interface Io {
  out(text: string): void;
  err(line: string): void;
  isTty: boolean;
  color: boolean;
}

function makeIo(flags: { color?: boolean | undefined }): Io {
  const isTty = process.stdout.isTTY === true;
  return {
    out: (text) => process.stdout.write(text),
    err: (line) => process.stderr.write(`${line}\n`),
    isTty,
    color: isTty && flags.color !== false && !process.env.NO_COLOR,
  };
}

async function dispatch(name: string, flags: Record<string, unknown> & GlobalFlags): Promise<number> {
  const io = makeIo(flags as { color?: boolean });
  const { resolveConfig } = await import('./config.js');
  const config = resolveConfig(flags, process.env);
  const log = (line: string) => {
    if (!config.quiet) io.err(line);
  };
  const { chooseFormat, renderRecord } = await import('../render/output.js');
  const format = chooseFormat({ json: flags.json === true, format: flags.format as string | undefined }, io.isTty);

  if (name === 'serve') {
    const { runServe } = await import('../commands/serve.js');
    const handle = await runServe(
      {
        host: String(flags.host),
        port: Number(flags.port),
        dataDir: config.dataDir,
        apiKey: config.apiKey,
        project: config.projectId,
      },
      { log },
    );
    if (format === 'table') {
      io.out(`cas service listening on ${handle.info.url}\n  api key:  ${handle.info.api_key}\n  project:  ${handle.info.project_id}\n  data dir: ${handle.info.data_dir}\nCtrl-C stops it.\n`);
    } else {
      io.out(`${JSON.stringify(handle.info)}\n`);
    }
    await handle.stopped;
    return EXIT.ok;
  }

  const { connect } = await import('../commands/connect.js');
  const connection = await connect(config, { log });
  try {
    if (name === 'identify' || name === 'alias') {
      const { runIdentify, runAlias } = await import('../commands/identify.js');
      const record =
        name === 'identify'
          ? await runIdentify(flags as Parameters<typeof runIdentify>[0], connection)
          : await runAlias(flags as Parameters<typeof runAlias>[0], connection);
      io.out(renderRecord(record, format, { color: io.color }));
      return EXIT.ok;
    }
    throw new Error(`no handler for command ${name}`);
  } finally {
    await connection.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  let verbose = argv.includes('-v') || argv.includes('--verbose');
  const program = buildProgram(async (name, flags) => {
    verbose = flags.verbose === true;
    exitCode = await dispatch(name, flags);
  });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed its message (it names the flag); help and version exit 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const failure = describeFailure(error);
    process.stderr.write(`cas: ${failure.message}\n`);
    if (failure.hint) process.stderr.write(`  hint: ${failure.hint}\n`);
    if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return failure.code;
  }
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
    // The embedded service and keep-alive sockets are closed by now; exit promptly regardless.
    setImmediate(() => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(`cas: ${String(error)}\n`);
    process.exit(EXIT.unexpected);
  },
);
