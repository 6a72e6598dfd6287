import { describe, expect, it } from 'vitest';
import { buildChartControls, type ChartEnv, type ChartFlags, type CliChart } from './chart-flags.js';
import { UsageError } from './errors.js';

// Sunday 2025-03-09 15:00 UTC.
const env: ChartEnv = { now: new Date('2025-03-09T15:00:00Z'), defaultTz: 'Asia/Tokyo' };

const seq = (...pairs: Array<[string, string]>) => pairs.map(([flag, value]) => ({ flag, value }));

function usage(chart: CliChart, flags: ChartFlags): UsageError {
  try {
    buildChartControls(chart, flags, env);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('expected a UsageError');
}

describe('a typical command per chart builds the hand-written chartControls', () => {
  it('segmentation: two series with their own --where, grouped, with user and intent filters', () => {
    const built = buildChartControls(
      'segmentation',
      {
        sequence: seq(
          ['event', 'Conversation Turn'],
          ['where', 'model = gpt-4o'],
          ['where', 'prompt_tokens > 100'],
          ['event', 'Purchase'],
          ['where', 'amount between 10,20.5'],
          ['intent', 'Billing'],
        ),
        groupBy: 'plan=free,pro',
        userWhere: ['country in US,CA'],
        last: '7d',
        tz: 'America/New_York',
      },
      env,
    );
    const plan = { property_name: 'plan', property_values: ['free', 'pro'] };
    expect(built.kind).toBe('segmentation');
    expect(built.controls).toEqual({
      range: { start: '2025-03-03', end: '2025-03-10', period: 'day', tz: 'America/New_York' },
      eventFilters: [
        {
          event_name: 'Conversation Turn',
          with: [
            { property_name: 'model', operator: 'eq', values: ['gpt-4o'] },
            { property_name: 'prompt_tokens', operator: 'gt', values: [100] },
          ],
          groupBy: plan,
        },
        {
          event_name: 'Purchase',
          with: [{ property_name: 'amount', operator: 'between', values: [10, 20.5] }],
          groupBy: plan,
        },
      ],
      userFilters: [{ with: [{ property_name: 'country', operator: 'in', values: ['US', 'CA'] }] }],
      shownIntents: [{ intent: 'Billing' }],
    });
    // The parsed copy has the schema defaults the service would apply.
    expect(built.parsed).toMatchObject({ eventFilters: [{ number_of: 1, number_of_operator: 'gte' }, {}] });
  });

  it('retention: --where filters the start event, returns, a trait group and user filters', () => {
    const built = buildChartControls(
      'retention',
      {
        sequence: seq(
          ['start-event', 'Signed Up'],
          ['where', 'source = ads'],
          ['return-event', 'Conversation Turn'],
          ['return-event', 'Purchase'],
          ['performed', 'Purchase >= 2'],
          ['where', 'amount > 5'],
        ),
        period: 'week',
        last: '12w',
        tz: 'UTC',
        trait: 'plan',
        cohort: 'All Users',
      },
      env,
    );
    expect(built.kind).toBe('retention');
    expect(built.controls).toEqual({
      range: { start: '2024-12-16', end: '2025-03-10', period: 'week', tz: 'UTC' },
      startingEvent: {
        event_name: 'Signed Up',
        with: [{ property_name: 'source', operator: 'eq', values: ['ads'] }],
      },
      returnEvents: [{ event_name: 'Conversation Turn' }, { event_name: 'Purchase' }],
      userFilters: [
        {
          cohort: 'All Users',
          performed_events: [
            {
              event_name: 'Purchase',
              number_of: 2,
              number_of_operator: 'gte',
              with: [{ property_name: 'amount', operator: 'gt', values: [5] }],
            },
          ],
        },
      ],
      groupBy: { trait_name: 'plan' },
    });
  });

  it('sessions: event filter with a regex, grouped by listed trait values, explicit dates', () => {
    const built = buildChartControls(
      'sessions',
      {
        sequence: seq(['event', 'Function Call'], ['where', 'name ~ ^search']),
        trait: 'plan=free,pro',
        from: '2025-03-01',
        to: '2025-03-31',
        tz: 'Europe/Paris',
      },
      env,
    );
    expect(built.kind).toBe('session');
    expect(built.controls).toEqual({
      range: { start: '2025-03-01', end: '2025-04-01', period: 'day', tz: 'Europe/Paris' },
      eventFilters: [
        {
          event_name: 'Function Call',
          with: [{ property_name: 'name', operator: 'regex', values: ['^search'] }],
        },
      ],
      groupBy: { trait_name: 'plan', trait_values: ['free', 'pro'] },
    });
  });

  it('users: selected trait, a second trait as groupBy, trait filter, intents; default zone', () => {
    const built = buildChartControls(
      'users',
      {
        trait: 'plan',
        groupBy: 'country=US,CA',
        userWhere: ['age between 18,65', 'beta = true'],
        sequence: seq(['intent', 'Any Intent'], ['where', 'confidence >= 0.8']),
        last: '6m',
        period: 'month',
      },
      env,
    );
    expect(built.kind).toBe('user-composition');
    expect(built.controls).toEqual({
      // Tokyo (the injected system zone): 2025-03-10 00:00 there, still March; up to that day.
      range: { start: '2024-10-01', end: '2025-03-11', period: 'month', tz: 'Asia/Tokyo' },
      selectedTrait: { trait_name: 'plan' },
      groupBy: { trait_name: 'country', trait_values: ['US', 'CA'] },
      userFilters: [
        {
          with: [
            { property_name: 'age', operator: 'between', values: [18, 65] },
            { property_name: 'beta', operator: 'eq', values: [true] },
          ],
        },
      ],
      shownIntents: [
        { intent: 'Any Intent', with: [{ property_name: 'confidence', operator: 'gte', values: [0.8] }] },
      ],
    });
  });

  it('defaults: last 30 days by day in the system zone', () => {
    const built = buildChartControls('segmentation', { sequence: seq(['event', 'Any Event']) }, env);
    expect(built.controls.range).toEqual({
      start: '2025-02-09',
      end: '2025-03-11',
      period: 'day',
      tz: 'Asia/Tokyo',
    });
  });
});

describe('--controls', () => {
  const file = {
    range: { start: '2025-01-01T00:00:00Z', end: '2025-02-01T00:00:00Z', period: 'week', tz: 'UTC' },
    eventFilters: [{ event_name: 'Purchase', number_of: 1 }],
    userFilters: [{ cohort: 'All Users', combine_previous_operation: 'or' }],
  };
  const controls = (value: unknown) => ({ source: 'c.json', text: JSON.stringify(value) });

  it('sends the file as is when no flag overrides it', () => {
    const built = buildChartControls('segmentation', { controls: controls(file) }, env);
    expect(JSON.stringify(built.controls)).toBe(JSON.stringify(file));
  });

  it('lets flags override field by field', () => {
    const built = buildChartControls(
      'segmentation',
      { controls: controls(file), period: 'day', groupBy: 'plan', sequence: [] },
      env,
    );
    expect(built.controls).toEqual({
      ...file,
      range: { ...file.range, period: 'day' },
      eventFilters: [
        { event_name: 'Purchase', number_of: 1, groupBy: { property_name: 'plan', property_values: [] } },
      ],
    });
    const replaced = buildChartControls(
      'segmentation',
      { controls: controls(file), sequence: seq(['event', 'Turn']), last: '1d', tz: 'UTC' },
      env,
    );
    expect(replaced.controls).toEqual({
      ...file,
      range: { start: '2025-03-09', end: '2025-03-10', period: 'week', tz: 'UTC' },
      eventFilters: [{ event_name: 'Turn' }],
    });
  });

  it('--from alone keeps the file end, --to alone keeps its start (they were replaced by --last 30d and today)', () => {
    const from = buildChartControls('segmentation', { controls: controls(file), from: '2025-01-15' }, env);
    expect(from.controls.range).toEqual({ ...file.range, start: '2025-01-15' });
    const to = buildChartControls('segmentation', { controls: controls(file), to: '2025-01-20' }, env);
    expect(to.controls.range).toEqual({ ...file.range, end: '2025-01-21' });
    const both = buildChartControls(
      'segmentation',
      { controls: controls(file), from: '2025-01-03', to: '2025-01-04' },
      env,
    );
    expect(both.controls.range).toEqual({ ...file.range, start: '2025-01-03', end: '2025-01-05' });
    // --last names a whole range: it still ends today (or at --to), whatever the file says.
    const last = buildChartControls('segmentation', { controls: controls(file), last: '2d' }, env);
    expect(last.controls.range).toEqual({ ...file.range, start: '2025-03-08', end: '2025-03-10' });
  });

  it('reports bad JSON and bad fields against --controls', () => {
    expect(usage('segmentation', { controls: { source: 'c.json', text: '{nope' } }).message).toMatch(
      /^--controls c\.json: not valid JSON/,
    );
    expect(usage('segmentation', { controls: { source: 'c.json', text: '[1]' } }).message).toBe(
      '--controls c.json: expected a chartControls JSON object',
    );
    expect(usage('segmentation', { controls: controls({ ...file, colour: 'red' }) }).message).toBe(
      '--controls c.json: unknown field (at colour)',
    );
  });
});

describe('errors name the flag and show an example', () => {
  it('schema failures are reported against the flag occurrence that made the field', () => {
    const bad = usage('segmentation', {
      sequence: seq(['event', 'A'], ['where', 'plan = pro'], ['event', 'B'], ['where', 'age > old']),
    });
    expect(bad.message).toMatch(/^--where "age > old": operator gt takes a number/);
    expect(bad.message).toContain('(at eventFilters[1].with[0].values[0])');
    expect(bad.hint).toMatch(/^e\.g\. --where/);
    expect(usage('segmentation', { sequence: seq(['event', '']) }).message).toMatch(
      /^--event "": must not be empty/,
    );
    expect(usage('users', { trait: 'x'.repeat(101) }).message).toMatch(/^--trait x+: must be at most 100/);
    expect(usage('segmentation', { sequence: seq(['event', 'A']), from: '1990-01-01' }).message).toMatch(
      /^--from 1990-01-01: range has \d+ day bins; at most 1000/,
    );
    expect(
      usage('segmentation', { sequence: seq(['event', 'A']), userWhere: ['x ~ 1', 'y < no'] }).message,
    ).toMatch(/^--user-where "y < no": /);
  });

  it('flags that do not apply to the chart are refused, not ignored', () => {
    expect(usage('retention', { sequence: seq(['event', 'A']) }).message).toBe(
      '--event does not apply to the retention chart',
    );
    expect(usage('users', { trait: 'plan', sequence: seq(['start-event', 'A']) }).message).toBe(
      '--start-event does not apply to the users chart',
    );
    expect(usage('segmentation', { sequence: seq(['event', 'A']), trait: 'plan' }).hint).toContain(
      '--group-by',
    );
  });

  it('required flags and misplaced --where are explained', () => {
    expect(usage('segmentation', {}).message).toBe('segmentation needs at least one --event <name>');
    expect(usage('segmentation', { groupBy: 'plan' }).message).toBe(
      'segmentation needs at least one --event <name>',
    );
    expect(usage('retention', {}).message).toBe('retention needs --start-event <name>');
    expect(usage('users', {}).message).toBe('the users chart needs --trait <name>');
    expect(usage('sessions', { sequence: seq(['where', 'a = 1']) }).message).toMatch(
      /^--where "a = 1": --where filters/,
    );
    expect(usage('retention', { sequence: seq(['start-event', 'A'], ['start-event', 'B']) }).message).toMatch(
      /--start-event given more than once/,
    );
    expect(usage('sessions', { trait: 'a', groupBy: 'b' }).message).toMatch(/^--trait and --group-by/);
  });

  it('sessions work without any event, grouped by --group-by as a trait', () => {
    const built = buildChartControls(
      'sessions',
      { groupBy: 'plan', from: '2025-03-01', to: '2025-03-01', tz: 'UTC' },
      env,
    );
    expect(built.controls).toEqual({
      range: { start: '2025-03-01', end: '2025-03-02', period: 'day', tz: 'UTC' },
      groupBy: { trait_name: 'plan' },
    });
  });
});
