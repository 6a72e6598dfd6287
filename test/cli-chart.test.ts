import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * `cas chart` through the built binary, up to the point where it would call the service:
 * --print-controls, --controls and usage errors. None of these may touch the data directory.
 */

const dir = tempDir('cas-chart-cli-');
const env = { XDG_DATA_HOME: join(dir.path, 'data') };
afterAll(() => dir.cleanup());

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

async function controls(args: string[], input?: string): Promise<unknown> {
  const result = await runCli(['chart', ...args, '--print-controls', '--json'], {
    env,
    ...(input !== undefined ? { input } : {}),
  });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

describe('cas chart --print-controls', () => {
  it('prints the built segmentation controls, each --where on the --event before it', async () => {
    const printed = await controls([
      'segmentation',
      '--event',
      'Conversation Turn',
      '--where',
      'model = gpt-4o',
      '--event',
      'Purchase',
      '--where',
      "zip = '02134'",
      '--where',
      'amount between 10,20',
      '--from',
      '2025-03-01',
      '--to',
      '2025-03-31',
      '--period',
      'week',
      '--tz',
      'Europe/Paris',
    ]);
    expect(printed).toEqual({
      range: { start: '2025-03-01', end: '2025-04-01', period: 'week', tz: 'Europe/Paris' },
      eventFilters: [
        {
          event_name: 'Conversation Turn',
          with: [{ property_name: 'model', operator: 'eq', values: ['gpt-4o'] }],
        },
        {
          event_name: 'Purchase',
          with: [
            { property_name: 'zip', operator: 'eq', values: ['02134'] },
            { property_name: 'amount', operator: 'between', values: [10, 20] },
          ],
        },
      ],
    });
  });

  it('defaults to the last 30 days by day, and builds the other three charts', async () => {
    // Around midnight UTC the two clocks could disagree; the window is a few milliseconds.
    expect(await controls(['segmentation', '--event', 'X', '--tz', 'UTC'])).toEqual({
      range: { start: day(-29), end: day(1), period: 'day', tz: 'UTC' },
      eventFilters: [{ event_name: 'X' }],
    });
    const range = ['--from', '2025-01-06', '--to', '2025-03-02', '--tz', 'UTC', '--period', 'week'];
    const weeks = { start: '2025-01-06', end: '2025-03-03', period: 'week', tz: 'UTC' };
    expect(
      await controls([
        'retention',
        '--start-event',
        'Signed Up',
        '--return-event',
        'Conversation Turn',
        '--trait',
        'plan',
        ...range,
      ]),
    ).toEqual({
      range: weeks,
      startingEvent: { event_name: 'Signed Up' },
      returnEvents: [{ event_name: 'Conversation Turn' }],
      groupBy: { trait_name: 'plan' },
    });
    expect(
      await controls(['sessions', '--performed', 'Purchase >= 2', '--cohort', 'All Users', ...range]),
    ).toEqual({
      range: weeks,
      userFilters: [
        {
          cohort: 'All Users',
          performed_events: [{ event_name: 'Purchase', number_of: 2, number_of_operator: 'gte' }],
        },
      ],
    });
    expect(
      await controls([
        'users',
        '--trait',
        'plan=free,pro',
        '--user-where',
        'age >= 18',
        '--intent',
        'Any Intent',
        ...range,
      ]),
    ).toEqual({
      range: weeks,
      selectedTrait: { trait_name: 'plan', trait_values: ['free', 'pro'] },
      userFilters: [{ with: [{ property_name: 'age', operator: 'gte', values: [18] }] }],
      shownIntents: [{ intent: 'Any Intent' }],
    });
  });

  it('takes the system zone as --tz, and UTC where TZ is set but empty (Node says "Etc/Unknown")', async () => {
    // An empty TZ failed as "this is a bug", or as --from/--to naming an unknown zone (found by probing).
    const cases: Array<[string, string]> = [
      ['America/Chicago', 'America/Chicago'],
      ['', 'UTC'],
      // A zone file, as the C library and Node's Date read TZ: charts were in UTC (found by probing).
      ['/usr/share/zoneinfo/America/New_York', 'America/New_York'],
      [':/usr/share/zoneinfo/posix/Asia/Kathmandu', 'Asia/Kathmandu'],
      // A POSIX fixed offset, which Date follows and Intl names no zone for: it was UTC (found by probing).
      ['UTC+5', 'Etc/GMT+5'],
    ];
    for (const [tz, expected] of cases) {
      const result = await runCli(
        [
          'chart',
          'segmentation',
          '--event',
          'X',
          '--from',
          '2025-03-09',
          '--to',
          '2025-03-09',
          '--print-controls',
          '--json',
        ],
        { env: { ...env, TZ: tz } },
      );
      expect(result.stderr, `TZ=${tz}`).toBe('');
      expect((JSON.parse(result.stdout) as { range: { tz: string } }).range.tz).toBe(expected);
    }
  });

  it('reads --controls from a file or stdin and lets flags override it', async () => {
    const file = {
      range: { start: '2025-03-01T00:00:00Z', end: '2025-03-08T00:00:00Z', period: 'day', tz: 'UTC' },
      eventFilters: [
        { event_name: 'Purchase', with: [{ property_name: 'amount', operator: 'gt', values: [5] }] },
      ],
    };
    const path = join(dir.path, 'controls.json');
    writeFileSync(path, JSON.stringify(file));
    expect(await controls(['segmentation', '--controls', path])).toEqual(file);
    expect(
      await controls(['segmentation', '--controls', '-', '--tz', 'Asia/Tokyo'], JSON.stringify(file)),
    ).toEqual({
      ...file,
      range: { ...file.range, tz: 'Asia/Tokyo' },
    });
    expect(existsSync(env.XDG_DATA_HOME)).toBe(false);
  });
});

describe('cas chart usage errors exit 2 and name the flag', () => {
  it.each([
    [['segmentation', '--event', 'X', '--where', 'age >> 3'], '--where "age >> 3": unknown operator ">>"'],
    [
      ['segmentation', '--event', 'X', '--where', 'age > old'],
      '--where "age > old": operator gt takes a number',
    ],
    [
      ['segmentation', '--where', 'a = 1', '--event', 'X'],
      '--where "a = 1": --where filters the --event before it',
    ],
    [['segmentation', '--event', 'X', '--period', 'year'], '--period "year": expected day, week or month'],
    [['segmentation', '--event', 'X', '--tz', 'Mars/Olympus'], '--tz "Mars/Olympus": unknown time zone'],
    [['segmentation', '--event', 'X', '--last', '3y'], '--last "3y"'],
    [['segmentation', '--event', 'X', '--from', '1990-01-01'], '--from 1990-01-01: range has'],
    [['segmentation'], 'segmentation needs at least one --event'],
    [['retention', '--event', 'X'], '--event does not apply to the retention chart'],
    [['users', '--trait', 'a', '--trait', 'b'], '--trait given more than once'],
    [
      ['sessions', '--performed', 'Buy >= lots'],
      '--performed "Buy >= lots": the count must be a whole number',
    ],
    [
      ['segmentation', '--event', 'X', '--controls', '/nonexistent/c.json'],
      '--controls /nonexistent/c.json: cannot read',
    ],
    [
      ['segmentation', '--event', 'X', '--format', 'xml'],
      "option '--format <format>' argument 'xml' is invalid",
    ],
    [['pie'], "argument 'chart'"],
    // It printed JSON without a word (found by probing); --json --format json is one output.
    [
      ['segmentation', '--event', 'X', '--json', '--format', 'csv'],
      '--json and --format csv ask for different outputs: give one of them',
    ],
  ])('cas chart %j', async (args, message) => {
    const result = await runCli(['chart', ...args, '--print-controls'], { env });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
  });

  it('takes --json with --format json, and cas import --json with its input --format', async () => {
    const chart = await runCli(
      ['chart', 'segmentation', '--event', 'X', '--json', '--format', 'json', '--print-controls'],
      { env },
    );
    expect(chart.code, chart.stderr).toBe(0);
    const file = join(dir.path, 'one.csv');
    writeFileSync(file, 'timestamp,user_id,user,assistant\n2025-01-01T00:00:00Z,u1,q,a\n');
    const dry = await runCli(['import', file, '--kind', 'turn', '--format', 'csv', '--json', '--dry-run'], {
      env: { XDG_DATA_HOME: join(dir.path, 'import-data') },
    });
    expect(dry.code, dry.stderr).toBe(0);
  });

  // The value was quoted whole: a 100 KB line (found by probing).
  it('keeps an error quoting a huge value to one bounded line, its start and end kept', async () => {
    const result = await runCli(['chart', 'segmentation', '--event', 'E'.repeat(100_000)], { env });
    expect(result.code).toBe(2);
    const [line = '', ...rest] = result.stderr.trimEnd().split('\n');
    expect(line.length).toBeLessThanOrEqual(2_100);
    expect(line).toMatch(/^cas: --event "E+ … \(\d+ characters left out\) … E+"/);
    expect(rest.filter((l) => !l.startsWith('  hint:'))).toEqual([]);
  });

  it('shows an example with the error', async () => {
    const result = await runCli(['chart', 'segmentation', '--event', 'X', '--where', 'plan'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/hint: e\.g\. --where "plan = pro"/);
    expect(existsSync(env.XDG_DATA_HOME)).toBe(false);
  });
});

describe('cas chart --help', () => {
  it('lists every flag with examples for each chart', async () => {
    const result = await runCli(['chart', '--help'], { env });
    expect(result.code).toBe(0);
    for (const text of [
      '--where <expr>',
      '--start-event',
      '--print-controls',
      '--format <format>',
      'Operators:',
    ]) {
      expect(result.stdout).toContain(text);
    }
    for (const chart of ['segmentation', 'retention', 'sessions', 'users']) {
      expect(result.stdout).toContain(`$ cas chart ${chart}`);
    }
  });
});

describe('cas report --help', () => {
  // It said --where filters "the --event", which cas report does not take.
  it('says --where filters the --performed or --intent before it', async () => {
    const help = await runCli(['report', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('filters the --performed or --intent before it');
  });
});

describe('cas report --out', () => {
  // A folder was written to when the page was done: "EISDIR … this is a bug", exit 1.
  it('a folder is a usage error naming the flag, before anything is fetched', async () => {
    const run = await runCli(['report', '--last', '7d', '--out', dir.path], { env });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      `cas: --out ${dir.path}: it is a folder; name a file in it, e.g. ${join(dir.path, 'report.html')}`,
    );
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
    // A file where the folder should be read "does not exist"; a loop of links was "this is a bug".
    const file = join(dir.path, 'a-file');
    writeFileSync(file, '');
    const loop = join(dir.path, 'loop-a');
    symlinkSync(join(dir.path, 'loop-b'), loop);
    symlinkSync(loop, join(dir.path, 'loop-b'));
    for (const [out, said] of [
      [join(file, 'r.html'), `--out ${join(file, 'r.html')}: ${file} is a file, not a directory`],
      [
        join(loop, 'r.html'),
        `--out ${join(loop, 'r.html')}: cannot use ${loop}: its symbolic links form a loop`,
      ],
    ]) {
      const bad = await runCli(['report', '--last', '7d', '--out', out ?? ''], { env });
      expect([bad.code, bad.stderr.trim()]).toEqual([2, `cas: ${said}`]);
    }
    // An empty value is the working directory to resolve(): it read "--out : it is a folder".
    const empty = await runCli(['report', '--last', '7d', '--out', ''], { env });
    expect([empty.code, empty.stderr.trim()]).toEqual([
      2,
      'cas: --out must not be empty: name a file, or - for stdout',
    ]);
  });

  it('- writes the page to stdout, not to a file named "-"', async () => {
    const cwd = join(dir.path, 'cwd');
    mkdirSync(cwd);
    const run = await runCli(['report', '--last', '7d', '--tz', 'UTC', '--out', '-'], { env, cwd });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^<!doctype html>/i);
    expect(run.stdout.trimEnd()).toMatch(/<\/html>$/);
    expect(existsSync(join(cwd, '-'))).toBe(false);
  });
});
