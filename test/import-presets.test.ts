import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedSessionId } from '../src/shared/derived-session.js';
import { runCli } from './helpers/cli.js';
import { countInDataDir, listInDataDir } from './helpers/import.js';
import { PRESET_FILES as files } from './helpers/preset-files.js';
import { tempDir } from './helpers/temp.js';

/**
 * `cas import` of each preset's format (issue 19), end to end: files in those formats written here,
 * imported by the built CLI into the embedded service over a real DuckDB file (all in one run: each
 * file's format is detected, ChatGPT's given with --preset-free detection too), then the stored
 * turns, function calls, usage, timestamps, sessions and costs compared exactly; costs are computed
 * by hand from the price table's per-token rates (src/service/ingest/prices/model-prices.json).
 */
const dir = tempDir('cas-import-presets-');
const data = join(dir.path, 'data');
afterAll(() => dir.cleanup());

// Per-token rates of the models used, as the price table has them.
const GPT_4O = { input: 2.5e-6, cached: 1.25e-6, output: 10e-6 };
const GPT_4O_MINI_BATCH = { input: 0.075e-6, output: 0.3e-6 };
const O3_MINI = { input: 1.1e-6, output: 4.4e-6 };
const O4_MINI = { input: 1.1e-6, cached: 0.275e-6, output: 4.4e-6 };
const SONNET_4 = { input: 3e-6, read: 0.3e-6, write: 3.75e-6, output: 15e-6 };
const round = (x: number) => Math.round(x * 1e12) / 1e12;

interface Row {
  event: string;
  timestamp: string;
  session_id: string;
  conversation_id?: string;
  user_id: string;
  properties?: Record<string, unknown>;
}
const KEPT = ['user', 'assistant', 'model', 'name', 'args', 'result', 'runtime', 'cost'];
const SHORT: Record<string, string> = {
  'Conversation Turn': 'turn',
  'Conversation Function': 'function',
  'Conversation Usage': 'usage',
};

/** Stored turns, function calls and usage as [kind, time, session, conversation, user, {kept properties}], in time order. */
function project(rows: Row[]): unknown[] {
  return rows
    .filter((r) => SHORT[r.event] !== undefined)
    .map((r) => {
      const props = Object.fromEntries(
        KEPT.filter((k) => r.properties?.[k] !== undefined).map((k) => [k, r.properties?.[k]]),
      );
      return [SHORT[r.event], r.timestamp, r.session_id, r.conversation_id, r.user_id, props];
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

const derived = (user: string, iso: string) => {
  const id = derivedSessionId(user, Date.parse(iso));
  return [id, `${id}/1`] as const;
};

let stored: unknown[] = [];
let first: { code: number | null; stdout: string; stderr: string };
beforeAll(async () => {
  const paths = Object.entries(files).map(([name, content]) => {
    const path = join(dir.path, name);
    writeFileSync(path, content);
    return path;
  });
  first = await runCli(['import', ...paths, '--set', 'user_id=me', '--data-dir', data, '--json']);
  stored = project((await listInDataDir(data)) as unknown as Row[]);
}, 120_000);

describe('cas import of real export and log formats', () => {
  it('imports every record of every format once', () => {
    expect(first.stderr.split('\n').filter((l) => l !== '' && !l.includes(' · '))).toEqual([]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ records: 20, rejected: 0, duplicates: 0 });
  });

  it('chatgpt: the active branch of each conversation, one session each, at the original times', () => {
    const a = ['gpt-a', 'gpt-a', 'me'];
    const b = ['gpt-b', 'gpt-b', 'me'];
    expect(stored.filter((r) => String((r as string[])[2]).startsWith('gpt-'))).toEqual([
      [
        'function',
        '2025-03-04T12:00:01.000Z',
        ...b,
        { args: 'print(2**10)', name: 'python', result: '1024', runtime: 500 },
      ],
      [
        'turn',
        '2025-03-04T10:00:03.000Z',
        ...a,
        { assistant: 'Paris.', model: 'gpt-4o', user: 'Capital of France?' },
      ],
      ['turn', '2025-03-04T10:02:02.750Z', ...a, { assistant: 'Madrid.', user: 'Spain?' }],
      ['turn', '2025-03-04T12:00:03.000Z', ...b, { assistant: '1024.', user: '2**10?' }],
    ]);
  });

  it('claude: a conversation is a session of its account, tool use a function call', () => {
    const c = ['cl-1', 'cl-1', 'acct'];
    expect(stored.filter((r) => (r as string[])[2] === 'cl-1')).toEqual([
      ['function', '2025-03-05T09:00:09.000Z', ...c, { args: '{"q":"hi"}', name: 'search', result: 'found' }],
      ['turn', '2025-03-05T09:00:09.000Z', ...c, { assistant: 'Hello!', user: 'Hi' }],
    ]);
  });

  it('openai-chat: tool rounds, cached and reasoning tokens, Batch API output paired with its input, priced exactly', () => {
    const ana = [...derived('ana', '2025-03-05T10:00:00Z'), 'ana'];
    const ben = [...derived('ben', '2025-03-05T11:00:00Z'), 'ben'];
    const cy = [...derived('cy', '2025-03-05T12:00:00Z'), 'cy'];
    const mine = stored.filter((r) => ['ana', 'ben', 'cy'].includes((r as string[])[4]!));
    expect(mine).toEqual([
      [
        'function',
        '2025-03-05T10:00:02.000Z',
        ...ana,
        { args: '{"id":42}', name: 'get_order', result: 'shipped' },
      ],
      [
        'turn',
        '2025-03-05T10:00:02.000Z',
        ...ana,
        {
          assistant: 'Shipped.',
          cost: round(1024 * GPT_4O.input + 1024 * GPT_4O.cached + 12 * GPT_4O.output),
          model: 'gpt-4o-2024-08-06',
          user: 'Order 42?',
        },
      ],
      [
        'turn',
        '2025-03-05T11:00:00.000Z',
        ...ben,
        {
          assistant: 'No.',
          cost: round(15 * O3_MINI.input + 400 * O3_MINI.output),
          model: 'o3-mini',
          user: 'Prime?',
        },
      ],
      [
        'turn',
        '2025-03-05T12:00:00.000Z',
        ...cy,
        {
          assistant: 'Hello?',
          cost: round(14 * GPT_4O_MINI_BATCH.input + 2 * GPT_4O_MINI_BATCH.output),
          model: 'gpt-4o-mini',
          user: 'Bonjour?',
        },
      ],
      [
        'usage',
        '2025-03-05T10:00:00.000Z',
        ...ana,
        { cost: round(1200 * GPT_4O.input + 20 * GPT_4O.output), model: 'gpt-4o-2024-08-06' },
      ],
    ]);
  });

  it('openai-responses: a previous_response_id chain is one session, cached and reasoning tokens priced', () => {
    const r = ['resp_1', 'resp_1', 'eve'];
    expect(stored.filter((x) => (x as string[])[2] === 'resp_1')).toEqual([
      ['function', '2025-03-06T10:00:00.000Z', ...r, { args: '{}', name: 'weather', result: 'sunny' }],
      [
        'turn',
        '2025-03-06T10:00:03.000Z',
        ...r,
        {
          assistant: 'Pack light.',
          cost: round(220 * O4_MINI.input + 1280 * O4_MINI.cached + 200 * O4_MINI.output),
          model: 'o4-mini',
          user: 'Pack for Lisbon?',
        },
      ],
      [
        'usage',
        '2025-03-06T10:00:00.000Z',
        ...r,
        { cost: round(300 * O4_MINI.input + 150 * O4_MINI.output), model: 'o4-mini' },
      ],
    ]);
  });

  it('anthropic: cache writes and reads priced at their rates, tool_use a function call', () => {
    const c = [...derived('cleo', '2025-03-07T08:00:00Z'), 'cleo'];
    const model = 'claude-sonnet-4-20250514';
    expect(stored.filter((x) => (x as string[])[4] === 'cleo')).toEqual([
      [
        'function',
        '2025-03-07T08:00:02.500Z',
        ...c,
        { args: '{"city":"Oslo"}', name: 'weather', result: 'snow' },
      ],
      [
        'turn',
        '2025-03-07T08:00:02.500Z',
        ...c,
        {
          assistant: 'Snowing.',
          cost: round(80 * SONNET_4.input + 2000 * SONNET_4.read + 15 * SONNET_4.output),
          model,
          user: 'Oslo?',
        },
      ],
      [
        'usage',
        '2025-03-07T08:00:00.000Z',
        ...c,
        { cost: round(50 * SONNET_4.input + 2000 * SONNET_4.write + 40 * SONNET_4.output), model },
      ],
    ]);
  });

  it('otlp: GenAI spans at their start times, in the session and conversation their attributes name', () => {
    const o = ['otel-s', 'otel-c', 'dana'];
    const model = 'gpt-4o-2024-08-06';
    expect(stored.filter((x) => (x as string[])[2] === 'otel-s')).toEqual([
      [
        'function',
        '2025-03-07T10:00:00.820Z',
        ...o,
        { args: '{"q":"key"}', name: 'search_docs', result: 'found', runtime: 250 },
      ],
      [
        'turn',
        '2025-03-07T10:00:01.100Z',
        ...o,
        {
          assistant: 'Rotate it.',
          cost: round(432 * GPT_4O.input + 768 * GPT_4O.cached + 25 * GPT_4O.output),
          model,
          user: 'Key?',
        },
      ],
      // A call that only asks for tools is usage, priced (as the OTLP receiver stores it): no second turn.
      [
        'usage',
        '2025-03-07T10:00:00.010Z',
        ...o,
        { cost: round(900 * GPT_4O.input + 30 * GPT_4O.output), model },
      ],
    ]);
  });

  it('a re-import stores nothing new: the same run is already complete, and sent again it is all duplicates', async () => {
    const before = await countInDataDir(data);
    const args = ['import', ...Object.keys(files).map((name) => join(dir.path, name)), '--set', 'user_id=me'];
    const same = await runCli([...args, '--data-dir', data, '--json']);
    expect(same.code).toBe(0);
    expect(same.stderr).toMatch(/already imported/);
    expect(JSON.parse(same.stdout)).toMatchObject({ events: 0, accepted: 0 });
    const again = await runCli([...args, '--data-dir', data, '--json', '--restart']);
    expect(again.code).toBe(0);
    const summary = JSON.parse(again.stdout);
    expect(summary).toMatchObject({ records: 20, accepted: 0, duplicates: summary.events });
    expect(await countInDataDir(data)).toBe(before);
  }, 120_000);
});
