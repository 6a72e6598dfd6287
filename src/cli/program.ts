import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { VERSION } from '../shared/version.js';
import { addChartOptions, CHART_NAMES, collect, type Sequence } from './chart-options.js';
import type { GlobalFlags } from './config.js';
import { addDiscoveryCommands, csvGuardOption, formatOption } from './program-discovery.js';
import { addReportCommand } from './program-report.js';
import { addServeLimitOptions } from './serve-limits.js';
import { addServeReadOptions } from './serve-read-options.js';

/** What an action needs from the program: its own options merged with the global ones. */
export type ActionRunner = (
  name: string,
  options: Record<string, unknown> & GlobalFlags,
  args: string[],
) => Promise<void>;

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

/** Digits only: Number('') is 0, so `--port ''` listened on a random port (found by probing). */
const DIGITS = /^\s*\d+\s*$/;

function wsPort(value: string): number {
  const n = Number(value);
  if (!DIGITS.test(value) || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError(`--ws-port must be 0-65535, got "${value}"`);
  return n;
}

function port(value: string): number {
  const n = Number(value);
  // InvalidArgumentError, so commander names the flag and the exit is a usage error (2), not a bug.
  if (!DIGITS.test(value) || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError(`--port must be 0-65535, got "${value}"`);
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
    .option('-v, --verbose', 'requests, retries and (on an unexpected error) its stack trace on stderr')
    .option('--timeout <ms>', 'per-request timeout in milliseconds', '30000')
    .option('--retries <n>', 'attempts per request, the first included', '5')
    .option(
      '--retry-time <s>',
      'total seconds retries may take (and asking a busy cas serve over --data-dir again)',
      '60',
    )
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
    .action((_options: Record<string, unknown>, command: Command) =>
      run('identify', command.optsWithGlobals(), []),
    );

  program
    .command('alias')
    .description('give a user a new primary id; earlier ids stay in aliases')
    .requiredOption('--id <new>', 'the new id, which becomes primary')
    .requiredOption('--previous <old>', 'an id the user already has')
    .addHelpText('after', examples(['cas alias --id dana@example.com --previous u1']))
    .action((_options: Record<string, unknown>, command: Command) =>
      run('alias', command.optsWithGlobals(), []),
    );

  const serveCommand = program
    .command('serve')
    .description('run the local service in the foreground; stops cleanly on Ctrl-C / SIGTERM')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--port <port>', 'port (0 picks a free one)').default(8787).argParser(port))
    .addOption(
      new Option(
        '--ws-port <port>',
        'also accept live-event websockets on this port (the hosted SDKs use :400x for a base URL on :300x); 0 picks a free one',
      ).argParser(wsPort),
    )
    .option(
      '--intents <file>',
      'user-defined intents for the served project: JSON [{"name", "description", "patterns": [RE2 regexes]}]',
    )
    .option(
      '--prices <file>',
      "price table merged over the built-in one: LiteLLM's model_prices_and_context_window.json or a file of the same shape",
    )
    .addHelpText(
      'after',
      examples([
        'cas serve',
        'cas serve --port 9000 --data-dir ./data --api-key K --project P --json',
        'cas serve --intents fixtures/intents.json',
        'cas serve --prices fixtures/prices.json',
      ]) +
        '\n--api-key with --project (both, or neither) provision that key and project (idempotent).' +
        '\n--intents: a user utterance shows an intent when any of its patterns matches (case-insensitive, anywhere);' +
        '\nconversations closed afterwards record it as an "Intent Informed" event.\n' +
        '\nLimits: sizes as 512KiB, 10MiB or bytes; durations as 500ms, 30s or 2m. Beyond a limit a request\n' +
        'gets 408 (too slow), 413 (too big), 429 (too many, with Retry-After) or 503 (service full, Retry-After).\n',
    )
    .action((_options: Record<string, unknown>, command: Command) =>
      run('serve', command.optsWithGlobals(), []),
    );
  addServeLimitOptions(serveCommand);
  addServeReadOptions(serveCommand);

  program
    .command('import')
    .description('stream CSV / JSONL records into the service as events: resumable, exactly once')
    .argument('<file...>', 'CSV or JSONL files (.gz read transparently); - reads stdin')
    .option('--format <format>', 'input format, csv or jsonl (default: from the file extension)')
    .option(
      '--kind <kind>',
      'kind of every record: turn, usage, function, event, identify, alias, end_conversation, end_session, wire (default: a "kind" column/key)',
    )
    .option(
      '--map <field=source>',
      'read field from another CSV column or JSONL dotted path, e.g. user=messages.0.content (repeatable)',
      collect,
    )
    .option('--mapping <file.json>', 'the same as a JSON object {"field": "source", ...}; --map wins')
    .option(
      '--preset <name>',
      "read a known format: chatgpt, claude, openai-chat, openai-responses, anthropic, otlp (default: detected from a JSON input's first record, stdin's too, when no --kind/--map/--mapping is given)",
    )
    .option(
      '--set <field=value>',
      'value for a field a record lacks, e.g. user_id=demo; {line} and {file} are filled in (repeatable)',
      collect,
    )
    .option(
      '--tz <zone>',
      'IANA zone of timestamps without Z or offset; a local time that occurs twice (DST ends) is the earlier, one that never occurs (DST starts) moves forward by the gap',
      'UTC',
    )
    .option(
      '--session-gap <duration>',
      'inactivity that ends a derived session: 30m, 2h, 90s (1ms to 366d)',
      '30m',
    )
    .option('--no-end', 'do not add end_conversation / end_session after each session')
    .option(
      '--batch-size <n>',
      'events per request, 1-2000 (default 2000 into our own service: the embedded one, or cas serve; 500 into another)',
    )
    .option(
      '--concurrency <n>',
      'requests in flight, 1-64; one per lane, events of a session keep their order (default 4)',
    )
    .option('--resume', 'continue from the checkpoint of an interrupted run of the same input (default)')
    .option('--restart', 'ignore and replace the checkpoint: read and send everything again')
    .option('--dry-run', 'validate and map everything, send nothing (--json: the wire events as JSONL)')
    .option('--reject-file <path>', 'write each rejected record as JSONL: the record, file, line and reason')
    .option(
      '--max-errors <n>',
      'rejected records allowed: the next one stops the run (it is reported; nothing after it is read or sent)',
      '100',
    )
    .option(
      '--keep-duplicates',
      'keep exact duplicate records as separate events (default: import them once)',
    )
    .option(
      '--prices <file>',
      'price table merged over the built-in one, for the embedded service only (LiteLLM shape; see cas serve --help)',
    )
    .addHelpText(
      'after',
      examples([
        'cas import fixtures/turns.csv',
        'cas import fixtures/events.jsonl fixtures/turns-more.csv.gz --reject-file rejects.jsonl',
        'gzip -dc export.jsonl.gz | cas import - --format jsonl --kind turn --dry-run --json | head',
        'cas import ../shared/data/bitext-customer-support-4514.csv --kind turn --map user=instruction --map assistant=response --set user_id=bitext-{line}',
        'cas import ../shared/data/arena-hard-v0.1-gpt-4-0613.jsonl --kind turn --map user=messages.0.content --map assistant=messages.1.content.answer --map timestamp=tstamp --set user_id=arena',
        'cas import fixtures/exports/chatgpt-conversations.json --preset chatgpt --set user_id=me',
        'cas import fixtures/exports/otlp-traces.json fixtures/exports/anthropic.jsonl',
      ]) +
        `
Records: CSV with a header row, or one JSON object per line. Columns timestamp, session_id,
conversation_id, user_id, device_id; turn: user, assistant, assistant_id, model, prompt_tokens,
completion_tokens, cost; usage: model + tokens or cost; function: name, args, result, runtime;
event: event (the name); identify: id, device_id; alias: id, previous_id. Other columns become
properties (traits for identify); prop.<name> / trait.<name> force the target, and a record whose
kind has no such place (a trait on a turn) is rejected. Timestamps: ISO 8601 (offsets within ±23:59),
epoch seconds or milliseconds; naive times are read in --tz. A flat record without a timestamp is
sent without one (the service stamps it on arrival); a preset's API-log line without the call's time
is rejected.

Presets read what LLM apps produce, as it is: chatgpt and claude (data exports, conversations.json),
openai-chat (Chat Completions and Batch API logs), openai-responses, anthropic (Messages API logs),
otlp (OTLP/JSON traces with GenAI attributes). Without --preset, --kind, --map and --mapping, a JSON
file whose first record is plainly one of them is read by its preset. With a preset, --set takes
only user_id and device_id (the user of formats that name none).

Order does not matter: the whole input is read and sorted (spilling to <data dir>/imports/ when
large) before anything is sent, so any order of rows and files gives the same events. Users and
aliases (identify/alias records without a session) are sent first, then each session in time order.

Sessions: records naming a session_id belong to it. Records without one are grouped per user (else
device) into sessions that end after --session-gap of inactivity (or at an end_session record), each
named from its user and start time. Records without conversation_id share the session's conversation.
The import ends each session at its last record unless the data ends it (--no-end: never).

Runs that continue each other: the ends the import adds are provisional on our service. A later run
with more history of a session (a daily export cut mid-session, an overlapping window, an earlier
file imported last) reopens it, and its next end replaces the previous one and its summary, under the
same ids. Derived sessions join the stored sessions of the same user within the gap, merging those a
new record bridges, so the stored result is the one a single run over all records gives. Ends stated
in the data are final: a record after such an end is refused (409); one before it is placed before
it. A service without these extensions (the hosted one) gets final ends: import each session in one
run there. A session end row naming only a session no run has created yet (no user or device in it)
is refused: import its file again after the others.

Duplicates: a record identical to another (same session or user, time and content) is imported once
and counted under duplicates; --keep-duplicates keeps each copy.

Exactly once: every event gets an id derived from its content, and the service stores an id once.
A checkpoint in <data dir>/imports/ records how far the service has acknowledged; after Ctrl-C,
kill -9 or a crash, the same command resumes there (anything re-sent is a harmless duplicate); an
input changed since starts over.
Exit 6 when any record was rejected, or the run stopped at --max-errors (then nothing more is sent,
and the summary says how many records were not read or not sent); bad records are reported as
file:line: reason. Ctrl-C or SIGTERM: the checkpoint is saved, exit 130.
`,
    )
    .action((files: string[], _options: Record<string, unknown>, command: Command) =>
      run('import', command.optsWithGlobals(), files),
    );

  program
    .command('reprice')
    .description("recompute stored token costs and conversation summaries with the service's price table")
    .option(
      '--from <when>',
      'only turns and usage from then: YYYY-MM-DD (UTC) or an ISO 8601 time (without an offset: UTC)',
    )
    .option(
      '--to <when>',
      'only turns and usage before then: a YYYY-MM-DD day is included; an ISO time is exclusive',
    )
    .option('--prices <file>', 'price table merged over the built-in one, for the embedded service only')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples([
        'cas reprice',
        'cas reprice --from 2025-01-06 --to 2025-02-02 --json',
        'cas reprice --prices fixtures/prices.json',
      ]) +
        '\nIdempotent: costs the service priced from tokens (cost_known set) are priced again and summaries\n' +
        'updated in place; costs sent by callers are kept. A running cas serve or --endpoint reprices with\n' +
        'the table it was started with (cas serve --prices), so --prices is refused there.\n',
    )
    .action((_options: Record<string, unknown>, command: Command) =>
      run('reprice', command.optsWithGlobals(), []),
    );

  // cas chart: the chart flags (chart-options.ts) collect the order-sensitive ones into `sequence`.
  const sequence: Sequence = [];
  const chartCommand = program
    .command('chart')
    .description('chart the data: build chartControls from flags, fetch the chart, render it')
    .addArgument(new Argument('<chart>', CHART_NAMES.join(' | ')).choices(CHART_NAMES));
  addChartOptions(chartCommand, sequence)
    .option('--print-controls', 'print the chartControls that would be sent; send nothing')
    .addOption(
      new Option(
        '--format <format>',
        'output (default: table on a terminal, json otherwise); html: a self-contained page, as cas report makes',
      ).choices(['table', 'json', 'jsonl', 'csv', 'html']),
    )
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples([
        'cas chart segmentation --event "Conversation Turn" --last 7d',
        'cas chart segmentation --event "Conversation Turn" --where "model = gpt-4o" --event Purchase --group-by plan',
        'cas chart retention --start-event "Session Started" --return-event "Conversation Turn" --period week --last 12w',
        'cas chart sessions --from 2025-03-01 --to 2025-03-31 --trait plan --format csv > sessions.csv',
        'cas chart users --trait plan=free,pro --user-where "country in US,CA" --json',
        'cas chart segmentation --event Purchase --performed "Signed Up" --print-controls > controls.json',
        'cas chart segmentation --controls controls.json --period week',
        'cas chart segmentation --event "Conversation Turn" --measure p95:completion_tokens --last 30d',
        'cas chart funnel --event "Conversation Started" --event "Conversation Turn" --event Purchase --window 1d --last 30d',
        'cas chart intents --trait plan --last 30d',
        'cas chart sentiment --intent "Any Intent" --last 30d',
        'cas chart conversations --analyse duration --period week --last 12w',
      ]) +
        '\nOperators: = != > >= < <=, in / not in a,b,c, between low,high, ~ / !~ (RE2 regex),\n' +
        '=i / !=i (case-insensitive). Numbers and true/false are typed; quote to keep a string: "zip = \'02134\'".\n',
    )
    .action((kind: string, _options: Record<string, unknown>, command: Command) =>
      run('chart', { ...command.optsWithGlobals(), sequence: [...sequence] }, [kind]),
    );

  program
    .command('tail')
    .description('print recent events, then each new one as it is stored (live events)')
    .option('--session <id>', 'only this session; exits 0 after its Session Ended')
    .option('--user <id>', "only this user's events (any of their ids: the primary one or an alias)")
    .option('--event <name>', 'only events of this name (repeatable)', collect)
    .option('--since <duration>', 'how far back the history goes: 30s, 10m, 2h, 7d or an ISO time', '10m')
    .option('--no-follow', 'print the history and exit')
    .addHelpText(
      'after',
      examples([
        'cas tail --session S1',
        'cas tail --event "Conversation Summary" --event MLError --since 1h',
        'cas tail --user u1 --since 7d --no-follow --json',
      ]) +
        '\nOne line per event on a terminal (time, event, user, session, key properties); JSONL when piped or\n' +
        'with --json. Follows a running `cas serve` (or --endpoint) over its live-events websocket, reconnecting\n' +
        'when it restarts; no event is printed twice.\n',
    )
    .action((_options: Record<string, unknown>, command: Command) =>
      run('tail', command.optsWithGlobals(), []),
    );

  addReportCommand(program, run);
  addDiscoveryCommands(program, run);
  return program;
}
