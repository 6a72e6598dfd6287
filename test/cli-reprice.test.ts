import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { roundCost } from '../src/service/ingest/costs.js';
import { PriceTable } from '../src/service/ingest/price-table.js';
import { liveEventsResponseSchema, type StoredEvent } from '../src/shared/events.js';
import { repriceResponseSchema } from '../src/shared/reprice.js';
import { runCli } from './helpers/cli.js';
import { listInDataDir } from './helpers/import.js';
import { byName } from './helpers/ingest.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 19: `cas reprice` recomputes stored token costs and conversation summaries with the price
 * table the service runs with (`--prices` for the embedded one); running it twice is the same state.
 */
const dir = tempDir('cas-reprice-');
afterAll(() => dir.cleanup());
const dataDir = join(dir.path, 'data');
const builtIn = PriceTable.builtIn();
const gpt4o = (field: string) => builtIn.entries.get('gpt-4o')?.[field] as number;

const DAY1 = '2025-03-03';
const records = [
  {
    kind: 'turn',
    session_id: 's1',
    timestamp: `${DAY1}T09:00:00Z`,
    user_id: 'u1',
    user: 'hi',
    assistant: 'hello',
    model: 'acme-llm-1',
    prompt_tokens: 1000,
    completion_tokens: 200,
  },
  {
    kind: 'usage',
    session_id: 's1',
    timestamp: `${DAY1}T09:01:00Z`,
    user_id: 'u1',
    model: 'gpt-4o',
    prompt_tokens: 3000,
    cached_prompt_tokens: 2048,
    completion_tokens: 100,
  },
  {
    kind: 'turn',
    session_id: 's2',
    timestamp: `${DAY1}T10:00:00Z`,
    user_id: 'u2',
    user: 'a',
    assistant: 'b',
    model: 'gpt-4o',
    prompt_tokens: 500,
    completion_tokens: 50,
  },
  {
    kind: 'turn',
    session_id: 's2',
    timestamp: `${DAY1}T10:01:00Z`,
    user_id: 'u2',
    user: 'c',
    assistant: 'd',
    model: 'acme-llm-1',
    prompt_tokens: 40,
    cached_prompt_tokens: 32,
    completion_tokens: 5,
  },
  // The next day, with a cost the caller sent: never repriced.
  {
    kind: 'turn',
    session_id: 's3',
    timestamp: '2025-03-04T08:00:00Z',
    user_id: 'u3',
    user: 'e',
    assistant: 'f',
    model: 'acme-llm-1',
    prompt_tokens: 7,
    completion_tokens: 7,
    cost: 0.5,
  },
];

interface Rates {
  in: number;
  out: number;
  cached: number;
}
function priceFile(name: string, acme: Rates, gpt?: Partial<Rates>): string {
  const path = join(dir.path, name);
  const entry = (r: Partial<Rates>) => ({
    ...(r.in === undefined ? {} : { input_cost_per_token: r.in }),
    ...(r.out === undefined ? {} : { output_cost_per_token: r.out }),
    ...(r.cached === undefined ? {} : { cache_read_input_token_cost: r.cached }),
  });
  writeFileSync(
    path,
    JSON.stringify({ 'acme-llm-1': entry(acme), ...(gpt ? { 'gpt-4o': entry(gpt) } : {}) }),
  );
  return path;
}

async function cas(args: string[]) {
  const result = await runCli([...args, '--data-dir', dataDir, '--json'], { timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

async function reprice(args: string[]) {
  return repriceResponseSchema.parse(JSON.parse((await cas(['reprice', ...args])).stdout));
}

/**
 * Every stored row of the CLI's own project (credentials.json), read by the service itself once the
 * CLI has let go of the data directory.
 */
async function stored(): Promise<StoredEvent[]> {
  const rows = await listInDataDir(dataDir);
  return liveEventsResponseSchema.parse(rows).reverse();
}

const costs = (events: StoredEvent[], name: string) =>
  Object.fromEntries(
    byName(events, name).map((e) => [
      `${e.session_id}@${e.timestamp}`,
      [e.properties?.cost, e.properties?.cost_known],
    ]),
  );

describe('cas reprice', () => {
  it('prices what the table did not know, updates summaries in place, and changes nothing when run again', async () => {
    const file = join(dir.path, 'calls.jsonl');
    writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    await cas(['import', file]);
    const before = await stored();
    const summaries = () => byName(before, 'Conversation Summary');
    expect(summaries()).toHaveLength(3);
    expect(byName(before, 'Conversation Turn').find((e) => e.session_id === 's1')?.properties).toMatchObject({
      cost: 0,
      cost_known: false,
    });

    // Day 1 only, with acme's rates: its two calls and the two summaries that counted them unknown.
    const acme1 = { in: 1e-6, out: 4e-6, cached: 2.5e-7 };
    const p1 = priceFile('p1.json', acme1);
    const first = await reprice(['--prices', p1, '--from', DAY1, '--to', DAY1]);
    expect(first).toMatchObject({
      events_checked: 4,
      events_repriced: 2,
      summaries_checked: 2,
      summaries_updated: 2,
    });
    expect(first.unknown_models).toEqual([]);
    const second = await reprice(['--prices', p1, '--from', DAY1, '--to', DAY1]);
    expect(second).toMatchObject({ events_checked: 4, events_repriced: 0, summaries_updated: 0 });

    const after1 = await stored();
    const s1acme = 1000 * acme1.in + 200 * acme1.out;
    const s1gpt =
      (3000 - 2048) * gpt4o('input_cost_per_token') +
      2048 * gpt4o('cache_read_input_token_cost') +
      100 * gpt4o('output_cost_per_token');
    const s2gpt = 500 * gpt4o('input_cost_per_token') + 50 * gpt4o('output_cost_per_token');
    const s2acme = (40 - 32) * acme1.in + 32 * acme1.cached + 5 * acme1.out;
    expect(costs(after1, 'Conversation Turn')).toEqual({
      [`s1@${DAY1}T09:00:00.000Z`]: [roundCost(s1acme), true],
      [`s2@${DAY1}T10:00:00.000Z`]: [roundCost(s2gpt), true],
      [`s2@${DAY1}T10:01:00.000Z`]: [roundCost(s2acme), true],
      's3@2025-03-04T08:00:00.000Z': [0.5, undefined],
    });
    const summaryOf = (events: StoredEvent[], session: string) =>
      byName(events, 'Conversation Summary').filter((e) => e.session_id === session);
    expect(summaryOf(after1, 's1')).toHaveLength(1);
    expect(summaryOf(after1, 's1')[0]?.properties).toMatchObject({
      cost: roundCost(roundCost(s1acme) + roundCost(s1gpt)),
      cost_known: true,
      turns: 1,
    });
    expect(summaryOf(after1, 's2')[0]?.properties).toMatchObject({
      cost: roundCost(roundCost(s2gpt) + roundCost(s2acme)),
      cost_known: true,
    });
    // Only the cost fields changed; every other row is as it was.
    const strip = (events: StoredEvent[]) =>
      events.map(({ properties, ...e }) => {
        const { cost: _cost, cost_known: _known, ...rest } = properties ?? {};
        return { ...e, properties: rest };
      });
    expect(strip(after1)).toEqual(strip(before));

    // New prices for both models, whole history: gpt-4o's calls change too, the caller's cost stays.
    const acme2 = { in: 2e-6, out: 8e-6, cached: 5e-7 };
    const gpt2 = { in: 3e-6, cached: 1e-6 };
    const p2 = priceFile('p2.json', acme2, gpt2);
    const third = await reprice(['--prices', p2]);
    expect(third).toMatchObject({
      events_checked: 4,
      events_repriced: 4,
      // s3's summary is not read: its only turn carries the caller's cost, which reprice never touches.
      summaries_checked: 2,
      summaries_updated: 2,
    });
    const after2 = await stored();
    const s1gpt2 = (3000 - 2048) * gpt2.in + 2048 * gpt2.cached + 100 * gpt4o('output_cost_per_token');
    expect(summaryOf(after2, 's1')[0]?.properties?.cost).toBe(
      roundCost(roundCost(1000 * acme2.in + 200 * acme2.out) + roundCost(s1gpt2)),
    );
    expect(costs(after2, 'Conversation Turn')['s3@2025-03-04T08:00:00.000Z']).toEqual([0.5, undefined]);
    expect(summaryOf(after2, 's3')[0]?.properties?.cost).toBe(0.5);

    const fourth = await reprice(['--prices', p2]);
    expect(fourth).toMatchObject({ events_repriced: 0, summaries_updated: 0 });
    expect(await stored()).toEqual(after2);
    // --format, as every command that prints a table takes it (it was an unknown option here).
    const csv = await runCli(['reprice', '--data-dir', dataDir, '--prices', p2, '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\n')[0]).toMatch(/events_checked/);
  }, 90_000);

  it('refuses --prices where it cannot apply, and a bad price file, naming it', async () => {
    const remote = await runCli([
      'reprice',
      '--endpoint',
      'http://127.0.0.1:9',
      '--api-key',
      'k',
      '--project',
      'p',
      '--prices',
      join(dir.path, 'p1.json'),
    ]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('applies only to the embedded service');
    const bad = join(dir.path, 'bad.json');
    writeFileSync(bad, JSON.stringify({ 'acme-llm-1': { output_cost_per_token: -1 } }));
    const refused = await runCli(['reprice', '--data-dir', dataDir, '--prices', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--prices ${bad}: acme-llm-1.output_cost_per_token: must be 0 or more`);
  });
});
