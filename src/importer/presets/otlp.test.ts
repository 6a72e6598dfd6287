import { afterAll, describe, expect, it } from 'vitest';
import { mapPresetFiles } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { anyValue } from './otlp.js';

const dir = tempDir('cas-otlp-');
afterAll(() => dir.cleanup());

const S = 1_741_341_600_000; // 2025-03-07T10:00:00Z in ms
type Value = string | number | boolean | string[];
const kv = (key: string, v: Value) => ({
  key,
  value: Array.isArray(v)
    ? { arrayValue: { values: v.map((s) => ({ stringValue: s })) } }
    : typeof v === 'number'
      ? Number.isInteger(v)
        ? { intValue: String(v) }
        : { doubleValue: v }
      : typeof v === 'boolean'
        ? { boolValue: v }
        : { stringValue: v },
});
const span = (
  id: string,
  startMs: number,
  endMs: number,
  attrs: Record<string, Value>,
  status?: unknown,
) => ({
  traceId: 'trace-1',
  spanId: id,
  name: id,
  startTimeUnixNano: `${BigInt(S + startMs) * 1_000_000n + 123n}`,
  endTimeUnixNano: `${BigInt(S + endMs) * 1_000_000n}`,
  attributes: Object.entries(attrs).map(([k, v]) => kv(k, v)),
  ...(status ? { status } : {}),
});
const doc = (resource: Record<string, Value>, spans: unknown[]) => ({
  resourceSpans: [
    { resource: { attributes: Object.entries(resource).map(([k, v]) => kv(k, v)) }, scopeSpans: [{ spans }] },
  ],
});
const ids = { 'session.id': 'sess-1', 'gen_ai.conversation.id': 'conv-1' };
const input = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Rotate my key?' }] }]);

describe('otlp preset', () => {
  it('maps GenAI, OpenLLMetry and OpenInference spans; ids from the span or its resource', async () => {
    const first = doc({ 'service.name': 'bot', 'user.id': 'dana' }, [
      span('agent', 0, 4000, { 'gen_ai.operation.name': 'invoke_agent', ...ids }),
      span('http', 1, 2, { 'http.method': 'GET' }),
      span('c1', 10, 800, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 900,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.response.finish_reasons': ['tool_calls'],
        ...ids,
      }),
      span(
        't1',
        820,
        1070,
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search',
          'gen_ai.tool.call.id': 'call-1',
          'gen_ai.tool.call.arguments': '{"q":"key"}',
          'gen_ai.tool.call.result': 'timeout',
          ...ids,
        },
        { code: 2 },
      ),
      span('c2', 1100, 2500, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.response.id': 'chatcmpl-2',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 25,
        'gen_ai.usage.cache_read.input_tokens': 768,
        'gen_ai.input.messages': input,
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Settings > Rotate.' }] },
        ]),
        ...ids,
      }),
    ]);
    const second = doc({}, [
      span('old', 60_000, 61_000, {
        'llm.request.type': 'chat',
        'gen_ai.request.model': 'claude-3-5-sonnet',
        'gen_ai.prompt.0.role': 'system',
        'gen_ai.prompt.0.content': 'Be brief.',
        'gen_ai.prompt.1.role': 'user',
        'gen_ai.prompt.1.content': 'Hi',
        'gen_ai.completion.0.content': 'Hello',
        'gen_ai.usage.prompt_tokens': 10,
        'gen_ai.usage.completion_tokens': 2,
        // Anthropic-style counts beside an input that excludes them: added back.
        'gen_ai.usage.cache_read_input_tokens': 100,
        'user.id': 'eli',
      }),
      span('oi', 62_000, 63_000, {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o-mini',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'Ciao?',
        'llm.output_messages.0.message.content': 'Ciao!',
        'llm.token_count.prompt': 20,
        'llm.token_count.completion': 3,
        'llm.token_count.completion_details.reasoning': 1,
        'user.id': 'eli',
      }),
    ]);
    // The collector's file exporter: one document per line; pretty-printed documents work the same.
    const file = `${JSON.stringify(first)}\n${JSON.stringify(second, null, 2)}\n`;
    const { events, rejections } = await mapPresetFiles(dir.path, 'otlp', { 'traces.json': file });
    expect(rejections).toEqual([]);
    const dana = { type: 'track', session_id: 'sess-1', conversation_id: 'conv-1', user_id: 'dana' };
    const at = (ms: number) => new Date(S + ms).toISOString();
    const trace = (id: string) => ({ span_id: id, trace_id: 'trace-1' });
    expect(events).toEqual([
      {
        ...dana,
        event: 'Conversation Usage',
        timestamp: at(10),
        properties: { completion_tokens: 30, model: 'gpt-4o', prompt_tokens: 900, ...trace('c1') },
      },
      {
        ...dana,
        event: 'Conversation Function',
        timestamp: at(820),
        properties: {
          args: '{"q":"key"}',
          call_id: 'call-1',
          name: 'search',
          result: 'timeout',
          runtime: 250,
          success: false,
          ...trace('t1'),
        },
      },
      {
        ...dana,
        event: 'Conversation Turn',
        timestamp: at(1100),
        properties: {
          assistant: 'Settings > Rotate.',
          assistant_id: 'chatcmpl-2',
          cached_prompt_tokens: 768,
          completion_tokens: 25,
          model: 'gpt-4o-2024-08-06',
          prompt_tokens: 1200,
          user: 'Rotate my key?',
          ...trace('c2'),
        },
      },
      {
        type: 'track',
        session_id: '(derived)',
        user_id: 'eli',
        event: 'Conversation Turn',
        timestamp: at(60_000),
        properties: {
          assistant: 'Hello',
          assistant_id: 'old',
          cached_prompt_tokens: 100,
          completion_tokens: 2,
          model: 'claude-3-5-sonnet',
          prompt_tokens: 110,
          user: 'Hi',
          ...trace('old'),
        },
      },
      {
        type: 'track',
        session_id: '(derived)',
        user_id: 'eli',
        event: 'Conversation Turn',
        timestamp: at(62_000),
        properties: {
          assistant: 'Ciao!',
          assistant_id: 'oi',
          completion_tokens: 3,
          model: 'gpt-4o-mini',
          prompt_tokens: 20,
          reasoning_tokens: 1,
          user: 'Ciao?',
          ...trace('oi'),
        },
      },
    ]);
  });

  it('reads AnyValue shapes, and refuses a document without resourceSpans', async () => {
    expect(anyValue({ kvlistValue: { values: [kv('a', 1), kv('b', ['x'])] } })).toEqual({ a: 1, b: ['x'] });
    expect(anyValue({ intValue: '9007199254740993' })).toBe(9007199254740992);
    const { rejections } = await mapPresetFiles(dir.path, 'otlp', { 'x.json': '{"spans": []}' });
    expect(rejections).toEqual([
      { where: 'x.json:1', reason: 'not an OTLP trace document: no resourceSpans' },
    ]);
  });
});
