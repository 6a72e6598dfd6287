import { Command, Option } from 'commander';
import { VERSION } from '../shared/version.js';
import type { GlobalFlags } from './config.js';

/** What an action needs from the program: its own options merged with the global ones. */
export type ActionRunner = (
  name: string,
  options: Record<string, unknown> & GlobalFlags,
  args: string[],
) => Promise<void>;

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port must be 0-65535, got "${value}"`);
  return n;
}

/**
 * The command tree. Actions are handed to `run`, which lazy-imports the command module, so
 * `cas --help` loads neither the database nor the HTTP stack.
 */
export function buildProgram(run: ActionRunner): Command {
  const program = new Command('cas')
    .description(
      'Conversational analytics: import chat telemetry, serve the analytics API, chart it in the terminal.',
    )
    .version(VERSION, '--version', 'print the version')
    .option(
      '--endpoint <url>',
      'service URL (env CAS_ENDPOINT, MLSDK_SERVER_BASE); none: the embedded local service',
    )
    .option('--api-key <key>', 'API key (env CAS_API_KEY, MLSDK_API_KEY)')
    .option('--project <id>', 'project id (env CAS_PROJECT_ID, MLSDK_PROJECT_ID)')
    .option('--profile <name>', 'profile of $XDG_CONFIG_HOME/cas/config.json (env CAS_PROFILE)')
    .option('--data-dir <dir>', 'data directory of the embedded service (env CAS_DATA_DIR)')
    .option('--json', 'machine output on stdout (default when stdout is not a terminal)')
    .option('-q, --quiet', 'no progress or notes on stderr')
    .option('-v, --verbose', 'requests, retries and stack traces on stderr')
    .option('--timeout <ms>', 'per-request timeout in milliseconds', '30000')
    .option('--retries <n>', 'attempts per request, the first included', '5')
    .option('--retry-time <s>', 'total seconds retries may take', '60')
    .option('--no-color', 'no colour (also NO_COLOR)')
    .exitOverride()
    .showHelpAfterError('(add --help for usage and examples)')
    .addHelpText(
      'after',
      examples([
        'cas identify --id u1 --trait plan=pro',
        'cas import fixtures/turns.csv',
        'cas chart segmentation --event "Conversation Turn" --last 7d',
        'cas serve --port 8787',
      ]),
    );

  program
    .command('identify')
    .description('create a user or device, or merge traits into it; prints the user record')
    .option('--id <id>', 'user id')
    .option('--device <id>', 'device id')
    .option(
      '--trait <key=value>',
      'trait (repeatable); numbers and true/false are typed, quote to keep a string: zip="\'02134\'"',
      collect,
    )
    .option('--traits <json>', 'traits as a JSON object')
    .addHelpText(
      'after',
      examples([
        'cas identify --id u1 --trait plan=pro --trait seats=3',
        'cas identify --device d-42 --json',
      ]),
    )
    .action((options: Record<string, unknown>, command: Command) =>
      run('identify', command.optsWithGlobals(), []),
    );

  program
    .command('alias')
    .description('give a user a new primary id; earlier ids stay in aliases')
    .requiredOption('--id <new>', 'the new id, which becomes primary')
    .requiredOption('--previous <old>', 'an id the user already has')
    .addHelpText('after', examples(['cas alias --id alice@example.com --previous u1']))
    .action((_options: Record<string, unknown>, command: Command) =>
      run('alias', command.optsWithGlobals(), []),
    );

  program
    .command('serve')
    .description('run the local service in the foreground; stops cleanly on Ctrl-C / SIGTERM')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--port <port>', 'port (0 picks a free one)').default(8787).argParser(port))
    .addHelpText(
      'after',
      examples(['cas serve', 'cas serve --port 9000 --data-dir ./data --api-key K --project P --json']) +
        '\n--api-key/--project with serve provision that key and project (idempotent).\n',
    )
    .action((_options: Record<string, unknown>, command: Command) =>
      run('serve', command.optsWithGlobals(), []),
    );

  return program;
}
