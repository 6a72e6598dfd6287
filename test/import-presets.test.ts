import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedSessionId } from '../src/shared/derived-session.js';
import { runCli } from './helpers/cli.js';
import { countInDataDir, listInDataDir } from './helpers/import.js';
import { jsonl } from './helpers/presets.js';
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

const sec = (iso: string) => Date.parse(iso) / 1000;
const text = (s: string) => ({ content_type: 'text', parts: [s] });
function msg(id: string, role: string, iso: string, content: unknown, extra: Record<string, unknown> = {}) {
  return {
    id,
    author: { role, name: extra.name ?? null },
    create_time: sec(iso),
    content,
    recipient: 'all',
    metadata: {},
    ...extra,
  };
}
const node = (id: string, parent: string | null, message: unknown = null) => ({
  id,
  parent,
  message,
  children: [],
});

const files: Record<string, string> = {
  'conversations.json': JSON.stringify([
    {
      id: 'gpt-a',
      current_node: 'a2b',
      mapping: {
        root: node('root', null),
        u1: node('u1', 'root', msg('u1', 'user', '2025-03-04T10:00:01Z', text('Capital of France?'))),
        a1: node(
          'a1',
          'u1',
          msg('a1', 'assistant', '2025-03-04T10:00:03Z', text('Paris.'), {
            metadata: { model_slug: 'gpt-4o' },
          }),
        ),
        u2a: node('u2a', 'a1', msg('u2a', 'user', '2025-03-04T10:01:00Z', text('Italy?'))),
        a2a: node('a2a', 'u2a', msg('a2a', 'assistant', '2025-03-04T10:01:02Z', text('Rome.'))),
        u2b: node('u2b', 'a1', msg('u2b', 'user', '2025-03-04T10:02:00.500Z', text('Spain?'))),
        a2b: node('a2b', 'u2b', msg('a2b', 'assistant', '2025-03-04T10:02:02.750Z', text('Madrid.'))),
      },
    },
    {
      id: 'gpt-b',
      current_node: 'f',
      mapping: {
        q: node('q', null, msg('q', 'user', '2025-03-04T12:00:00Z', text('2**10?'))),
        c: node(
          'c',
          'q',
          msg(
            'c',
            'assistant',
            '2025-03-04T12:00:01Z',
            { content_type: 'code', text: 'print(2**10)' },
            { recipient: 'python' },
          ),
        ),
        o: node(
          'o',
          'c',
          msg(
            'o',
            'tool',
            '2025-03-04T12:00:01.500Z',
            { content_type: 'execution_output', text: '1024' },
            { name: 'python' },
          ),
        ),
        f: node('f', 'o', msg('f', 'assistant', '2025-03-04T12:00:03Z', text('1024.'))),
      },
    },
  ]),
  'claude.json': JSON.stringify([
    {
      uuid: 'cl-1',
      account: { uuid: 'acct' },
      chat_messages: [
        {
          uuid: 'h1',
          sender: 'human',
          created_at: '2025-03-05T09:00:01Z',
          content: [{ type: 'text', text: 'Hi' }],
        },
        {
          uuid: 'r1',
          sender: 'assistant',
          created_at: '2025-03-05T09:00:09Z',
          content: [
            { type: 'tool_use', id: 't1', name: 'search', input: { q: 'hi' } },
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'found' }] },
            { type: 'text', text: 'Hello!' },
          ],
        },
      ],
    },
  ]),
  'chat.jsonl': jsonl([
    {
      request: { model: 'gpt-4o', user: 'ana', messages: [{ role: 'user', content: 'Order 42?' }] },
      response: {
        id: 'c1',
        created: sec('2025-03-05T10:00:00Z'),
        model: 'gpt-4o-2024-08-06',
        choices: [
          {
            message: {
              role: 'assistant',
              tool_calls: [{ id: 'k1', function: { name: 'get_order', arguments: '{"id":42}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 1200, completion_tokens: 20 },
      },
    },
    {
      request: {
        model: 'gpt-4o',
        user: 'ana',
        messages: [
          { role: 'user', content: 'Order 42?' },
          {
            role: 'assistant',
            tool_calls: [{ id: 'k1', function: { name: 'get_order', arguments: '{"id":42}' } }],
          },
          { role: 'tool', tool_call_id: 'k1', content: 'shipped' },
        ],
      },
      response: {
        id: 'c2',
        created: sec('2025-03-05T10:00:02Z'),
        model: 'gpt-4o-2024-08-06',
        choices: [{ message: { role: 'assistant', content: 'Shipped.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 2048, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 1024 } },
      },
    },
    {
      request: { model: 'o3-mini', user: 'ben', messages: [{ role: 'user', content: 'Prime?' }] },
      response: {
        id: 'c3',
        created: sec('2025-03-05T11:00:00Z'),
        model: 'o3-mini',
        choices: [{ message: { role: 'assistant', content: 'No.' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 15,
          completion_tokens: 400,
          completion_tokens_details: { reasoning_tokens: 384 },
        },
      },
    },
  ]),
  'batch-in.jsonl': jsonl([
    {
      custom_id: 'r1',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-4o-mini', user: 'cy', messages: [{ role: 'user', content: 'Bonjour?' }] },
    },
  ]),
  'batch-out.jsonl': jsonl([
    {
      custom_id: 'r1',
      response: {
        status_code: 200,
        body: {
          id: 'b1',
          object: 'chat.completion',
          created: sec('2025-03-05T12:00:00Z'),
          model: 'gpt-4o-mini',
          choices: [{ message: { role: 'assistant', content: 'Hello?' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 14, completion_tokens: 2 },
        },
      },
    },
  ]),
  'responses.jsonl': jsonl([
    {
      request: { input: 'Pack for Lisbon?' },
      response: {
        id: 'resp_1',
        object: 'response',
        created_at: sec('2025-03-06T10:00:00Z'),
        model: 'o4-mini',
        user: 'eve',
        output: [{ type: 'function_call', call_id: 'w1', name: 'weather', arguments: '{}' }],
        usage: { input_tokens: 300, output_tokens: 150, output_tokens_details: { reasoning_tokens: 128 } },
      },
    },
    {
      request: {
        previous_response_id: 'resp_1',
        input: [{ type: 'function_call_output', call_id: 'w1', output: 'sunny' }],
      },
      response: {
        id: 'resp_2',
        object: 'response',
        created_at: sec('2025-03-06T10:00:03Z'),
        model: 'o4-mini',
        user: 'eve',
        previous_response_id: 'resp_1',
        output: [
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Pack light.' }] },
        ],
        usage: { input_tokens: 1500, input_tokens_details: { cached_tokens: 1280 }, output_tokens: 200 },
      },
    },
  ]),
  'anthropic.jsonl': jsonl([
    {
      timestamp: '2025-03-07T08:00:00Z',
      request: {
        model: 'claude-sonnet-4-20250514',
        metadata: { user_id: 'cleo' },
        messages: [{ role: 'user', content: 'Oslo?' }],
      },
      response: {
        id: 'm1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [{ type: 'tool_use', id: 'u1', name: 'weather', input: { city: 'Oslo' } }],
        stop_reason: 'tool_use',
        usage: {
          input_tokens: 50,
          cache_creation_input_tokens: 2000,
          cache_read_input_tokens: 0,
          output_tokens: 40,
        },
      },
    },
    {
      timestamp: '2025-03-07T08:00:02.500Z',
      request: {
        model: 'claude-sonnet-4-20250514',
        metadata: { user_id: 'cleo' },
        messages: [
          { role: 'user', content: 'Oslo?' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'u1', name: 'weather', input: { city: 'Oslo' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u1', content: 'snow' }] },
        ],
      },
      response: {
        id: 'm2',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [{ type: 'text', text: 'Snowing.' }],
        stop_reason: 'end_turn',
        usage: {
          input_tokens: 80,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 2000,
          output_tokens: 15,
        },
      },
    },
  ]),
  'traces.json': JSON.stringify(
    {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'user.id', value: { stringValue: 'dana' } }] },
          scopeSpans: [
            {
              spans: [
                otelSpan('s1', '2025-03-07T10:00:00.010Z', 790, {
                  'gen_ai.operation.name': 'chat',
                  'gen_ai.response.model': 'gpt-4o-2024-08-06',
                  'gen_ai.usage.input_tokens': 900,
                  'gen_ai.usage.output_tokens': 30,
                  'gen_ai.response.finish_reasons': 'tool_calls',
                }),
                otelSpan('s2', '2025-03-07T10:00:00.820Z', 250, {
                  'gen_ai.operation.name': 'execute_tool',
                  'gen_ai.tool.name': 'search_docs',
                  'gen_ai.tool.call.arguments': '{"q":"key"}',
                  'gen_ai.tool.call.result': 'found',
                }),
                otelSpan('s3', '2025-03-07T10:00:01.100Z', 1400, {
                  'gen_ai.operation.name': 'chat',
                  'gen_ai.response.model': 'gpt-4o-2024-08-06',
                  'gen_ai.usage.input_tokens': 1200,
                  'gen_ai.usage.output_tokens': 25,
                  'gen_ai.usage.cache_read.input_tokens': 768,
                  'gen_ai.input.messages': JSON.stringify([
                    { role: 'user', parts: [{ type: 'text', content: 'Key?' }] },
                  ]),
                  'gen_ai.output.messages': JSON.stringify([
                    { role: 'assistant', parts: [{ type: 'text', content: 'Rotate it.' }] },
                  ]),
                }),
              ],
            },
          ],
        },
      ],
    },
    null,
    2,
  ),
};

function otelSpan(id: string, iso: string, durationMs: number, attrs: Record<string, string | number>) {
  const start = BigInt(Date.parse(iso)) * 1_000_000n;
  const all = { ...attrs, 'session.id': 'otel-s', 'gen_ai.conversation.id': 'otel-c' };
  return {
    traceId: 't',
    spanId: id,
    name: id,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + BigInt(durationMs) * 1_000_000n),
    attributes: Object.entries(all).map(([key, v]) => ({
      key,
      value:
        key === 'gen_ai.response.finish_reasons'
          ? { arrayValue: { values: [{ stringValue: v }] } }
          : typeof v === 'number'
            ? { intValue: String(v) }
            : { stringValue: v },
    })),
  };
}

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
      [
        'usage',
        '2025-03-07T10:00:00.010Z',
        ...o,
        { cost: round(900 * GPT_4O.input + 30 * GPT_4O.output), model },
      ],
    ]);
  });

  it('a re-import stores nothing new', async () => {
    const before = await countInDataDir(data);
    const again = await runCli([
      'import',
      ...Object.keys(files).map((name) => join(dir.path, name)),
      '--set',
      'user_id=me',
      '--data-dir',
      data,
      '--json',
      '--restart',
    ]);
    expect(again.code).toBe(0);
    const summary = JSON.parse(again.stdout);
    expect(summary).toMatchObject({ records: 20, accepted: 0, duplicates: summary.events });
    expect(await countInDataDir(data)).toBe(before);
  }, 120_000);
});
