import { type Command, Option } from 'commander';
import type { ActionRunner } from './program.js';

/**
 * The discovery and administration commands of issue 18 (`cas events`, `properties`, `users`,
 * `cohorts`, `intents`, `keys`, `config`), registered apart from program.ts's chart and import
 * definitions. Actions are lazy-loaded through `run` like every other command.
 */

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export const formatOption = () =>
  new Option('--format <format>', 'output (default: table on a terminal, json otherwise)').choices([
    'table',
    'json',
    'jsonl',
    'csv',
  ]);

/** Every listing with --format csv takes it, as cas chart does (the guard was applied, the flag refused). */
export const csvGuardOption = () =>
  new Option(
    '--no-csv-guard',
    "CSV: keep cells that start with = + - @ as they are (by default they get a leading ' so a spreadsheet does not run them)",
  );

type Args = unknown[];

/** commander passes positional arguments, then options, then the command. */
function handler(run: ActionRunner, name: string, extra: () => Record<string, unknown> = () => ({})) {
  return (...all: Args) => {
    const command = all.at(-1) as Command;
    const positional = all.slice(0, -2).filter((a): a is string => typeof a === 'string');
    return run(name, { ...command.optsWithGlobals(), ...extra() }, positional);
  };
}

export function addDiscoveryCommands(program: Command, run: ActionRunner): void {
  program
    .command('events')
    .description('the event names of the project, with how many rows and people each has and when')
    .option('--like <regex>', 'only names matching this RE2 regex (anywhere; anchor with ^ and $)')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas events', 'cas events --like "^Conversation" --format csv']))
    .action(handler(run, 'events'));

  program
    .command('properties')
    .description('the properties of one event: how many rows carry each, their types and top values')
    .argument('<event>', 'the event name, e.g. "Conversation Turn"')
    .option('--top <n>', 'most frequent values per property (0-50)', '5')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples(['cas properties "Conversation Turn"', 'cas properties Purchase --top 10 --json']),
    )
    .action(handler(run, 'properties'));

  const users = program
    .command('users')
    .description('the people of the project')
    .addHelpText('after', examples(['cas users list', 'cas users show u1']));
  users
    .command('list')
    .description('users with their ids, aliases and traits (100 at a time)')
    .option('--like <regex>', 'RE2 regex matched in the user id, aliases and trait values')
    .option('--limit <n>', 'users per page', '100')
    .option('--offset <n>', 'users to skip', '0')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas users list', 'cas users list --like "@example.com$" --format csv']))
    .action(handler(run, 'users-list'));
  users
    .command('show')
    .description("one user's record and sessions")
    .argument('<id>', "the user's id (current or alias) or the service's u_… id")
    .option('--sessions <n>', 'sessions to include', '20')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas identify --id u1 --trait plan=pro', 'cas users show u1']))
    .action(handler(run, 'users-show'));

  addCohortCommands(program, run);
  addAdminCommands(program, run);

  program
    .command('config')
    .description(
      'where commands send data: the effective endpoint, project, data directory and profile, and where each came from (never the key)',
    )
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas config', 'cas --project my-app config --json']))
    .action(handler(run, 'config'));
}

function addCohortCommands(program: Command, run: ActionRunner): void {
  const cohorts = program
    .command('cohorts')
    .description('named user definitions, usable as --cohort in charts')
    .addHelpText('after', examples(['cas cohorts list']));
  cohorts
    .command('list')
    .description('the cohorts of the project and their terms')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas cohorts list']))
    .action(handler(run, 'cohorts-list'));

  // --where filters the --performed (or --intent) before it, as on cas chart: kept in command-line order.
  const sequence: Array<{ flag: string; value: string }> = [];
  const inOrder = (flag: string) => (value: string) => {
    sequence.push({ flag, value });
    return sequence;
  };
  cohorts
    .command('create')
    .description(
      'a cohort from the user filters cas chart takes: --user-where, --performed, --intent, --cohort',
    )
    .argument('<name>', 'the cohort name (then cas chart ... --cohort <name>)')
    .option('--description <text>', 'what the cohort is for')
    .option('--user-where <expr>', '"<trait> <op> <value>": users whose trait matches (repeatable)', collect)
    .option(
      '--performed <expr>',
      '"<event> [op n]": users who did it ("Purchase >= 3"; repeatable)',
      inOrder('performed'),
    )
    .option(
      '--where <expr>',
      '"<prop> <op> <value>": filters the --performed or --intent before it',
      inOrder('where'),
    )
    .option(
      '--intent <name>',
      'users who showed this intent (repeatable: any of them, as on a chart)',
      inOrder('intent'),
    )
    .option('--cohort <name>', 'users of another cohort (repeatable)', collect)
    .option('--any', 'a user matching any flag belongs, each --user-where alone (default: every flag)')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples([
        'cas cohorts create "Big teams" --user-where "seats >= 5" --description "5 seats or more"',
        'cas cohorts create "Pro buyers" --user-where "plan = pro" --performed "Purchase >= 1" --json',
      ]) +
        '\nThe flags read as on cas chart: cas chart ... --cohort "Big teams" selects the users that\n' +
        'cas chart ... --user-where "seats >= 5" does. Events and intents count within the chart range.\n',
    )
    .action(handler(run, 'cohorts-create', () => ({ sequence: [...sequence] })));
  cohorts
    .command('show')
    .description('a cohort (by name or id), its terms and its first members')
    .argument('<cohort>', 'name or cohort id')
    .option('--members <n>', 'members to list', '20')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples(['cas cohorts create Teams --user-where "seats >= 2"', 'cas cohorts show Teams']),
    )
    .action(handler(run, 'cohorts-show'));
  cohorts
    .command('delete')
    .description('delete a cohort (by name or id)')
    .argument('<cohort>', 'name or cohort id')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples(['cas cohorts create Temp --user-where "plan = free"', 'cas cohorts delete Temp']),
    )
    .action(handler(run, 'cohorts-delete'));
}

function addAdminCommands(program: Command, run: ActionRunner): void {
  const intents = program
    .command('intents')
    .description("the project's user-defined intents")
    .addHelpText('after', examples(['cas intents list']));
  intents
    .command('list')
    .description('user-defined intents with their patterns and attributes')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas intents list']))
    .action(handler(run, 'intents-list'));
  intents
    .command('add')
    .description('add an intent, found in the user turns of conversations closed from now on')
    .argument('<name>', 'the intent name')
    .option('--description <text>', 'what the intent means')
    .option(
      '--pattern <regex>',
      'RE2 regex matched case-insensitively in user turns (repeatable); our extension, refused by a service without it',
      collect,
    )
    .option('--attribute <name[:description]>', 'an attribute (slot) of the intent (repeatable)', collect)
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples(['cas intents add refund --description "asks for money back" --pattern "refund|money back"']),
    )
    .action(handler(run, 'intents-add'));
  intents
    .command('remove')
    .description('remove an intent (by name or id)')
    .argument('<intent>', 'name or user_defined_intent_id')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples(['cas intents add cancel --pattern "cancel"', 'cas intents remove cancel']),
    )
    .action(handler(run, 'intents-remove'));

  const keys = program
    .command('keys')
    .description("the organization's API keys")
    .addHelpText('after', examples(['cas keys list']));
  keys
    .command('list')
    .description('key ids, labels and creation times (secrets are never listed)')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas keys list']))
    .action(handler(run, 'keys-list'));
  keys
    .command('create')
    .description('a new key for the organization; its secret is printed this once')
    .option('--label <text>', 'a name to tell keys apart')
    .option('--rotate <key>', 'replace this key (id or secret): it is revoked in the same step')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText('after', examples(['cas keys create --label ci --json']))
    .action(handler(run, 'keys-create'));
  keys
    .command('revoke')
    .description('revoke a key (by key id or secret)')
    .argument('<key>', 'key id (from cas keys list) or the secret')
    .addOption(formatOption())
    .addOption(csvGuardOption())
    .addHelpText(
      'after',
      examples(['cas keys revoke "$(cas keys create --label temporary --json | jq -r .key_id)"']),
    )
    .action(handler(run, 'keys-revoke'));
}
