import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveEventsResponseSchema, type StoredEvent } from '../src/shared/events.js';
import { runCli } from './helpers/cli.js';
import { queue } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 18's discovery and administration commands through the built CLI against the real service,
 * seeded with generated people and events (January 2025): events, properties, users, cohorts,
 * intents, keys (table and --json), the hints of an empty chart, and cas config's provenance. The
 * references are computed here from what was generated or from the stored rows (live events).
 */

let t: TestService;
let stored: StoredEvent[];
const dir = tempDir('cas-discovery-');

interface Person {
  id: string;
  plan: string;
  seats: number;
  purchases: number;
}

/** Deterministic: person i has seats i % 9 + 1, a plan by i % 3, and buys when i % 4 < 2. */
const PEOPLE: Person[] = Array.from({ length: 16 }, (_, i) => ({
  id: `user-${i}`,
  plan: ['free', 'pro', 'team'][i % 3] as string,
  seats: (i % 9) + 1,
  purchases: i % 4 < 2 ? (i % 3) + 1 : 0,
}));
const MODELS = ['gpt-4o', 'claude-3-5-sonnet', 'gpt-4o-mini'];

function generated(): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  PEOPLE.forEach((p, i) => {
    const day = `2025-01-${String(3 + i).padStart(2, '0')}`;
    const session = `s-${p.id}`;
    for (let k = 0; k < 3 + (i % 3); k++) {
      events.push({
        type: 'track',
        event: 'Conversation Turn',
        user_id: p.id,
        session_id: session,
        timestamp: `${day}T10:0${k}:00Z`,
        properties: { user: 'hi', assistant: 'hello', model: MODELS[(i + k) % 3], cost: 0.01 * (k + 1) },
      });
    }
    // One person comes back a week later, in a second session (cas users show --sessions).
    if (i === 9)
      events.push({
        type: 'track',
        event: 'Conversation Turn',
        user_id: p.id,
        session_id: `${session}-later`,
        timestamp: `2025-01-${String(10 + i).padStart(2, '0')}T10:00:00Z`,
        properties: { user: 'back', assistant: 'welcome back', model: MODELS[0], cost: 0.01 },
      });
    for (let k = 0; k < p.purchases; k++) {
      events.push({
        type: 'track',
        event: 'Purchase',
        user_id: p.id,
        session_id: session,
        timestamp: `${day}T11:0${k}:00Z`,
        properties: { amount: 10 * (k + 1) },
      });
    }
  });
  return events;
}

beforeAll(async () => {
  t = await startTestService();
  for (const p of PEOPLE) {
    const res = await t.post('/bc/v1/user/identify', { id: p.id, traits: { plan: p.plan, seats: p.seats } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }
  expect((await queue(t, generated())).status).toBe(200);
  const res = await t.get('/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&limit=10000');
  stored = liveEventsResponseSchema.parse(res.json);
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

const remote = () => ['--endpoint', t.url, '--api-key', t.apiKey, '--project', t.projectId];
const cas = (args: string[], env: Record<string, string> = {}) => runCli([...remote(), ...args], { env });
const json = async (args: string[]) => {
  const result = await cas([...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as unknown;
};
const JANUARY = ['--from', '2025-01-01', '--to', '2025-01-31', '--tz', 'UTC'];

describe.concurrent('cas events and cas properties', () => {
  it('list every stored event name with its rows and people, as a table and as JSON', async () => {
    const [listed, table] = await Promise.all([
      json(['events']),
      cas(['events', '--like', '^Purch', '--format', 'table']),
    ]);
    const names = [...new Set(stored.map((e) => e.event))].sort();
    const { events } = listed as { events: Array<{ event: string; count: number; users: number }> };
    expect(events.map((e) => e.event)).toEqual(names);
    for (const e of events) {
      const rows = stored.filter((s) => s.event === e.event);
      expect(e.count).toBe(rows.length);
      expect(e.users).toBe(new Set(rows.map((r) => r.user_id)).size);
    }
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/│ Purchase\s+│ \d+\s+│ \d+\s+│ 2025-01-\d\d │ 2025-01-\d\d │/);
    expect(table.stdout).not.toContain('Conversation Turn');
  });

  it("list an event's properties with types and the most frequent values counted", async () => {
    const listed = (await json(['properties', 'Conversation Turn', '--top', '3'])) as {
      properties: Array<{ property: string; types: string[]; top: Array<{ value: unknown; count: number }> }>;
    };
    const model = listed.properties.find((p) => p.property === 'model');
    const tally = new Map<string, number>();
    for (const e of stored.filter((s) => s.event === 'Conversation Turn')) {
      const m = String(e.properties?.model);
      tally.set(m, (tally.get(m) ?? 0) + 1);
    }
    expect(model?.types).toEqual(['string']);
    expect(new Map(model?.top.map((v) => [String(v.value), v.count]))).toEqual(tally);
    expect(listed.properties.find((p) => p.property === 'cost')?.types).toEqual(['number']);
    const unknown = await cas(['properties', 'Purchse', '--format', 'table']);
    expect(unknown.code).toBe(0);
    expect(unknown.stderr).toContain('did you mean "Purchase"?');
  });
});

describe.concurrent('cas users', () => {
  it('lists the people with their traits, pages, and shows one with its sessions', async () => {
    const [all, page, shown] = await Promise.all([
      json(['users', 'list', '--limit', '100']),
      cas(['users', 'list', '--limit', '5', '--offset', '2', '--format', 'table']),
      json(['users', 'show', 'user-7']),
    ]);
    const list = all as { users: Array<{ id: string; traits: Record<string, unknown> }>; total: number };
    expect(list.total).toBe(PEOPLE.length);
    expect(new Map(list.users.map((u) => [u.id, u.traits.seats]))).toEqual(
      new Map(PEOPLE.map((p) => [p.id, p.seats])),
    );
    expect(page.stdout).toContain(`5 of ${PEOPLE.length} users`);
    const user = shown as { id: string; traits: { plan: string }; sessions: Array<{ events: unknown[] }> };
    expect(user.id).toBe('user-7');
    expect(user.traits.plan).toBe(PEOPLE[7]?.plan);
    const events = stored.filter((e) => e.session_id === 's-user-7');
    expect(user.sessions.flatMap((s) => s.events)).toHaveLength(events.length);
  });

  it('--format jsonl prints each listed item as the data --json holds, not as table text', async () => {
    const lines = async (args: string[]) => {
      const result = await cas([...args, '--format', 'jsonl']);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown);
    };
    const [list, listLines, shown, shownLines, props, propLines, shownCsv] = await Promise.all([
      json(['users', 'list', '--limit', '100']),
      lines(['users', 'list', '--limit', '100']),
      json(['users', 'show', 'user-7']),
      lines(['users', 'show', 'user-7']),
      json(['properties', 'Conversation Turn']),
      lines(['properties', 'Conversation Turn']),
      cas(['users', 'show', 'user-7', '--format', 'csv']),
    ]);
    // CSV's durations are JSON's milliseconds, not the table's rounded "229.3 s" (found by probing).
    const [head, ...csvRows] = shownCsv.stdout.trim().split('\n');
    expect(head).toBe('session_id,started_at,ended_at,duration,events');
    expect(csvRows.map((row) => row.split(',')[3])).toEqual(
      (shown as { sessions: Array<{ duration: number }> }).sessions.map((x) => String(x.duration)),
    );
    const users = (list as { users: Array<{ aliases: unknown; traits: unknown }> }).users;
    expect(listLines).toEqual(users);
    // Lists stay lists and traits objects (the table shows them as `a, b` and `plan=pro`).
    expect(listLines[0]).toMatchObject({ aliases: expect.any(Array), traits: { plan: expect.any(String) } });
    expect(shownLines).toEqual((shown as { sessions: unknown[] }).sessions);
    expect(propLines).toEqual((props as { properties: unknown[] }).properties);
    expect(propLines).toContainEqual(
      expect.objectContaining({ property: 'model', types: expect.any(Array) }),
    );
  });

  it('--format csv guards formula cells, and --no-csv-guard (as on cas chart) keeps them', async () => {
    // A data directory of its own: a user added to the shared service would change the others' counts.
    const data = join(dir.path, 'formula');
    const made = await runCli(['identify', '--id', '=1+2', '--data-dir', data, '--json']);
    expect(made.code, made.stderr).toBe(0);
    const args = ['users', 'list', '--format', 'csv', '--data-dir', data];
    const guarded = await runCli(args);
    const kept = await runCli([...args, '--no-csv-guard']);
    expect(guarded.code, guarded.stderr).toBe(0);
    expect(guarded.stdout).toContain("'=1+2");
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout.split('\n')[1]).toMatch(/^=1\+2,/);
  });

  it('users show says when the person has more sessions than it shows', async () => {
    const [one, cut, none, noneJson] = await Promise.all([
      cas(['users', 'show', 'user-7', '--sessions', '1', '--format', 'table']),
      cas(['users', 'show', 'user-9', '--sessions', '1', '--format', 'table']),
      cas(['users', 'show', 'user-7', '--sessions', '0', '--format', 'table']),
      json(['users', 'show', 'user-7', '--sessions', '0']),
    ]);
    expect(one.stdout).toContain('1 session\n');
    expect(one.stdout).not.toContain('there are');
    // user-9 has two sessions (generated()): the oldest is shown, and the table says there is more.
    expect(cut.stdout).toContain('s-user-9 ');
    expect(cut.stdout).not.toContain('s-user-9-later');
    expect(cut.stdout).toContain('the first 1 session, oldest first; there are more (--sessions <n>)');
    expect(none.stdout).toContain('sessions not shown; there are some (--sessions <n>)');
    expect((noneJson as { sessions: unknown[] }).sessions).toEqual([]);
  });
});

/** Series totals of a segmentation chart's JSON, drilldown ids aside (they hash the controls). */
const totals = (body: unknown) =>
  (body as Array<{ points: Array<{ total: number; unique: number }> }>).map((s) =>
    s.points.map((p) => [p.total, p.unique]),
  );

describe.concurrent('cas cohorts', () => {
  it('a cohort made with cohorts create filters a chart exactly as the same --user-where / --performed', async () => {
    const filters = ['--user-where', 'seats >= 4', '--performed', 'Purchase >= 2'];
    const created = (await json(['cohorts', 'create', 'Busy teams', ...filters])) as { cohort_id: string };
    expect(created.cohort_id).toEqual(expect.any(String));
    const chart = ['chart', 'segmentation', '--event', 'Conversation Turn', ...JANUARY];
    const [byCohort, inline, shown, list] = await Promise.all([
      json([...chart, '--cohort', 'Busy teams']),
      cas([...chart, ...filters, '--json']),
      json(['cohorts', 'show', 'Busy teams', '--members', '100']),
      cas(['cohorts', 'list', '--format', 'table']),
    ]);
    // A chart with data says nothing on stderr.
    expect(inline.stderr).toBe('');
    expect(totals(byCohort)).toEqual(totals(JSON.parse(inline.stdout)));
    const members = PEOPLE.filter((p) => p.seats >= 4 && p.purchases >= 2).map((p) => p.id);
    const turns = stored.filter((e) => e.event === 'Conversation Turn');
    const sum = (body: unknown) => totals(body)[0]?.reduce((n, [total]) => n + (total ?? 0), 0);
    expect(sum(byCohort)).toBe(turns.filter((e) => members.includes(e.user_id ?? '')).length);
    expect(sum(byCohort)).toBeGreaterThan(0);
    expect(sum(byCohort)).toBeLessThan(turns.length);
    expect((shown as { members: Array<{ id: string }> }).members.map((m) => m.id).sort()).toEqual(
      members.sort(),
    );
    expect(list.stdout).toContain('seats >= 4 and performed "Purchase" >= 2');

    const deleted = await cas(['cohorts', 'delete', 'Busy teams', '--json']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await json(['cohorts', 'list'])).toEqual([]);
  });
});

describe.concurrent('cas intents and cas keys', () => {
  it('adds, lists and removes a user-defined intent', async () => {
    const added = (await json([
      'intents',
      'add',
      'refund',
      '--description',
      'money back',
      '--pattern',
      'refund|money back',
    ])) as { user_defined_intent_id: string };
    const table = await cas(['intents', 'list', '--format', 'table']);
    expect(table.stdout).toContain(added.user_defined_intent_id);
    expect(table.stdout).toContain('refund|money back');
    // A name of the form of an id is refused: `remove <that name>` removed the intent of that id.
    const posing = await cas(['intents', 'add', added.user_defined_intent_id]);
    expect(posing.code).toBe(2);
    expect(posing.stderr).toContain('has the form of an intent id');
    // Names are unique whatever their case, so they are found whatever their case.
    expect((await cas(['intents', 'remove', ' REFUND'])).code).toBe(0);
    const after = (await json(['intents', 'list'])) as Array<{ user_defined_intent_id: string }>;
    expect(after.map((i) => i.user_defined_intent_id)).not.toContain(added.user_defined_intent_id);
    // Six CLI runs one after another: 30 s was not enough on a loaded 2-core machine.
  }, 90_000);

  it('creates a key whose secret is printed once and works, lists ids only, and revokes it', async () => {
    const created = await cas(['keys', 'create', '--label', 'ci', '--json']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('shown this once');
    const key = JSON.parse(created.stdout) as { apikey: string; key_id: string };
    const withNewKey = ['--endpoint', t.url, '--api-key', key.apikey, '--project', t.projectId];
    expect((await runCli([...withNewKey, 'events', '--json'])).code).toBe(0);
    const listed = await cas(['keys', 'list', '--format', 'table']);
    expect(listed.stdout).toContain(key.key_id);
    expect(listed.stdout).not.toContain(key.apikey);
    expect((await cas(['keys', 'revoke', key.key_id, '--json'])).code).toBe(0);
    expect((await runCli([...withNewKey, 'events', '--json'])).code).toBe(3);
  }, 90_000);
});

describe.concurrent('an empty chart says why on stderr, exit code unchanged', () => {
  it('a misspelled --event: zeros, exit 0, and the nearest name suggested', async () => {
    const result = await cas(['chart', 'segmentation', '--event', 'Conversation Trun', ...JANUARY, '--json']);
    expect(result.code).toBe(0);
    expect(
      totals(JSON.parse(result.stdout))
        .flat(2)
        .every((n) => n === 0),
    ).toBe(true);
    expect(result.stderr).toContain('no event named "Conversation Trun"');
    expect(result.stderr).toContain('did you mean "Conversation Turn"?');
  });

  it('a --where property nobody has: the nearest property names', async () => {
    const result = await cas([
      'chart',
      'segmentation',
      '--event',
      'Conversation Turn',
      '--where',
      'modle = gpt-4o',
      ...JANUARY,
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/property "modle".*did you mean "model"\?/);
  });

  // A misspelt group draws a chart all the same (everything in one "(none)" group), so it is
  // checked whatever the chart shows: it said nothing (found by probing the README).
  it('a misspelt --group-by property or --trait: the chart, and the nearest names', async () => {
    const [grouped, users, correct] = await Promise.all([
      cas([
        'chart',
        'segmentation',
        '--event',
        'Conversation Turn',
        '--group-by',
        'modle',
        ...JANUARY,
        '--json',
      ]),
      cas(['chart', 'users', '--trait', 'plna', ...JANUARY, '--json']),
      cas([
        'chart',
        'segmentation',
        '--event',
        'Conversation Turn',
        '--group-by',
        'model',
        ...JANUARY,
        '--json',
      ]),
    ]);
    expect(grouped.code).toBe(0);
    const positive = (v: unknown): boolean =>
      typeof v === 'number' ? v > 0 : v !== null && typeof v === 'object' && Object.values(v).some(positive);
    expect(positive(JSON.parse(grouped.stdout))).toBe(true);
    expect(grouped.stderr).toMatch(/property "modle".*did you mean "model"\?/);
    expect(users.code).toBe(0);
    expect(users.stderr).toContain('no user has a trait "plna"; did you mean "plan"?');
    expect(correct.code).toBe(0);
    expect(correct.stderr).toBe('');
  });

  it('a range without data: where the data lies, and --from/--to to try', async () => {
    const result = await cas([
      'chart',
      'segmentation',
      '--event',
      'Conversation Turn',
      '--tz',
      'UTC',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const days = stored
      .filter((e) => e.event === 'Conversation Turn')
      .map((e) => e.timestamp.slice(0, 10))
      .sort();
    expect(result.stderr).toContain(
      `the data spans ${days[0]} .. ${days.at(-1)}: try --from 2025-01-01 --to 2025-01-31`,
    );
    expect(result.stderr).toMatch(
      /no "Conversation Turn" events between \d{4}-\d\d-\d\d and \d{4}-\d\d-\d\d \(UTC\)/,
    );
  });
});

describe.concurrent('a regex only the service can judge', () => {
  it('refused in a flag: exit 2 naming the flag and its value; in a --controls file: exit 8', async () => {
    const controls = join(dir.path, 'bad-regex.json');
    mkdirSync(dir.path, { recursive: true });
    writeFileSync(
      controls,
      JSON.stringify({
        eventFilters: [
          { event_name: 'Purchase', with: [{ property_name: 'x', operator: 'regex', values: ['('] }] },
        ],
      }),
    );
    const runs = await Promise.all([
      cas(['users', 'list', '--like', '(']),
      cas(['events', '--like', 'a(']),
      cas(['intents', 'add', 'bad', '--pattern', 'fine', '--pattern', 'b(']),
      cas(['cohorts', 'create', 'Bad', '--user-where', 'plan ~ c(']),
      cas(['cohorts', 'create', 'Bad', '--performed', 'Purchase', '--where', 'amount ~ d(']),
      // With --any each --user-where is a term of its own: the second is named, not the first.
      cas(['cohorts', 'create', 'Bad', '--any', '--user-where', 'plan = x', '--user-where', 'plan ~ f(']),
      cas(['chart', 'segmentation', '--event', 'Purchase', '--where', 'amount ~ e(', ...JANUARY]),
      cas(['chart', 'segmentation', '--controls', controls, ...JANUARY]),
    ]);
    const named = [
      '--like "("',
      '--like "a("',
      '--pattern "b("',
      '--user-where "plan ~ c("',
      '--where "amount ~ d("',
      '--user-where "plan ~ f("',
    ];
    named.push('--where "amount ~ e("');
    named.forEach((flag, i) => {
      const run = runs[i];
      expect(run?.code, run?.stderr).toBe(2);
      expect(run?.stderr).toMatch(new RegExp(`^cas: ${flag.replace(/[(~]/g, '\\$&')}: not a valid RE2`));
    });
    const fromFile = runs[7];
    expect(fromFile?.code, fromFile?.stderr).toBe(8);
    expect(fromFile?.stderr).toContain('eventFilters[0].with[0].values[0]');
    // Nothing was created.
    const cohorts = (await json(['cohorts', 'list'])) as Array<{ name: string }>;
    expect(cohorts.map((c) => c.name)).not.toContain('Bad');
  });
});

describe.concurrent('cas config', () => {
  it('says where each setting came from, and never prints the key', async () => {
    const config = join(dir.path, 'config');
    mkdirSync(join(config, 'cas'), { recursive: true });
    writeFileSync(
      join(config, 'cas', 'config.json'),
      JSON.stringify({
        default_profile: 'prod',
        profiles: { prod: { project_id: 'from-profile', data_dir: '/p/data' } },
      }),
    );
    const env = {
      XDG_CONFIG_HOME: config,
      CAS_ENDPOINT: 'http://127.0.0.1:9',
      MLSDK_API_KEY: 'very-secret-key-123',
    };
    const [asJson, table] = await Promise.all([
      runCli(['config', '--json'], { env }),
      runCli(['--project', 'from-flag', 'config', '--format', 'table'], { env }),
    ]);
    for (const r of [asJson, table]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain('very-secret-key-123');
    }
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      mode: 'remote',
      endpoint: { value: 'http://127.0.0.1:9', source: { kind: 'env', name: 'CAS_ENDPOINT' } },
      api_key: { set: true, source: { kind: 'env', name: 'MLSDK_API_KEY' } },
      project: { value: 'from-profile', source: { kind: 'profile', name: 'prod' } },
      data_dir: { value: '/p/data', source: { kind: 'profile', name: 'prod' } },
      profile: { value: 'prod', source: { kind: 'config-file', name: 'default_profile' } },
    });
    expect(table.stdout).toMatch(/│ project\s+│ from-flag\s+│ flag --project/);
    expect(table.stdout).toMatch(/│ api key\s+│ \(set\)\s+│ env MLSDK_API_KEY; never shown/);
    // A password in the endpoint's URL is a secret too.
    const withPassword = await runCli(['config', '--json'], {
      env: { ...env, CAS_ENDPOINT: 'http://user:pw-secret-9@127.0.0.1:9/base' },
    });
    expect(withPassword.stdout).not.toContain('pw-secret-9');
    expect(JSON.parse(withPassword.stdout)).toMatchObject({
      endpoint: { value: 'http://user:***@127.0.0.1:9/base' },
    });
  });

  it('a hosted key left in MLSDK_API_KEY with no endpoint: the refusal says where the key came from', async () => {
    const env = {
      XDG_CONFIG_HOME: join(dir.path, 'no-config'),
      MLSDK_API_KEY: 'hosted-key',
      MLSDK_PROJECT_ID: 'hosted',
    };
    const r = await runCli(['events', '--data-dir', join(dir.path, 'stray-key'), '--format', 'csv'], { env });
    expect(r.code).toBe(3);
    // It said "check --api-key and --project", though no flag was given (found by probing).
    expect(r.stderr).toMatch(/hint: the key is MLSDK_API_KEY's and no endpoint is set/);
    expect(r.stderr).not.toContain('hosted-key');
  });
});
