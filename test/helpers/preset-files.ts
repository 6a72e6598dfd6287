import { jsonl } from './presets.js';

/**
 * One small file per preset's format (test/import-presets.test.ts imports them all in one run): two
 * ChatGPT conversations (one with an edited branch, one with a code-interpreter call), a Claude
 * conversation with a tool, Chat Completions calls (a tool round, cached and reasoning tokens) with
 * Batch API input and output, a Responses chain, Anthropic calls with cache writes and reads, and
 * OTLP GenAI spans.
 */
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

export const PRESET_FILES: Record<string, string> = {
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
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: id.replace(/^s/, '').padStart(16, '0'),
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
