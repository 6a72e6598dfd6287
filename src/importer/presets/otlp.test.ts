import { afterAll, describe, expect, it } from 'vitest';
import { mapPresetFiles } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { mapGenAiSpan } from '../../shared/otel-genai.js';
import { otlpSpans } from '../../shared/otlp-spans.js';

const dir = tempDir('cas-otlp-');
afterAll(() => dir.cleanup());

const TRACE = '0af7651916cd43dd8448eb211c80319c';
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
  traceId: TRACE,
  spanId: id.padStart(16, '0'),
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
  const first = doc({ 'service.name': 'bot', 'user.id': 'dana' }, [
    span('a1', 0, 4000, { 'gen_ai.operation.name': 'invoke_agent', ...ids }),
    span('b1', 1, 2, { 'http.method': 'GET' }),
    span('c1', 10, 800, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 900,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      ...ids,
    }),
    span(
      'd1',
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
      { code: 2, message: 'boom' },
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
  // No user anywhere: the receiver's rule makes the service a device.
  const second = doc({ 'service.name': 'batch-job' }, [
    span('e1', 60_000, 61_000, {
      'llm.request.type': 'chat',
      'gen_ai.request.model': 'claude-3-5-sonnet',
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'Be brief.',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'Hi',
      'gen_ai.completion.0.content': 'Hello',
      'gen_ai.usage.prompt_tokens': 10,
      'gen_ai.usage.completion_tokens': 2,
      'gen_ai.usage.cache_read_input_tokens': 100,
    }),
    span('f1', 62_000, 63_000, {
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
  /** What `POST /v1/traces` makes of the same documents, without undefined keys. */
  const received = (...docs: unknown[]) =>
    docs.flatMap((d) =>
      otlpSpans(d).spans.flatMap((s) => {
        const m = mapGenAiSpan(s);
        return m.kind === 'skip' ? [] : [m.event];
      }),
    );
  const defined = (e: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined));

  it('maps each span to the event the OTLP receiver stores: its id, envelope and properties', async () => {
    // The collector's file exporter: one document per line; pretty-printed documents work the same.
    const file = `${JSON.stringify(first)}\n${JSON.stringify(second, null, 2)}\n`;
    const { events, rejections } = await mapPresetFiles(dir.path, 'otlp', { 'traces.json': file });
    expect(rejections).toEqual([]);
    expect(events.map(defined)).toEqual(received(first, second));
    const byId = new Map(events.map((e) => [e.event_id, e]));
    const id = (span: string) => `otel-${TRACE}-${span.padStart(16, '0')}`;
    expect([...byId.keys()]).toEqual(['c1', 'd1', 'c2', 'e1', 'f1'].map(id));
    expect(byId.get(id('d1'))).toMatchObject({
      user_id: 'dana',
      session_id: 'sess-1',
      timestamp: new Date(S + 820).toISOString(),
      properties: { error: 'boom', runtime: 250, call_id: 'call-1' },
    });
    expect(byId.get(id('d1'))?.properties).not.toHaveProperty('success');
    expect(byId.get(id('c2'))?.properties).not.toHaveProperty('assistant_id');
    expect(defined(byId.get(id('e1')) ?? {})).toMatchObject({
      device_id: `otel:batch-job:trace-${TRACE}`,
      session_id: `trace-${TRACE}`,
    });
    expect(byId.get(id('e1'))?.user_id).toBeUndefined();
  });

  it("keeps the receiver's rule for spans without a user whatever --set says", async () => {
    const { events } = await mapPresetFiles(dir.path, 'otlp', { 'set.json': JSON.stringify(second) }, [
      'user_id=me',
      'device_id=d',
    ]);
    expect(events.map(defined)).toEqual(received(second));
  });

  it('reads protobuf field names, and refuses malformed spans by path and non-trace documents', async () => {
    const snake = JSON.parse(
      JSON.stringify(first)
        .replaceAll('"resourceSpans"', '"resource_spans"')
        .replaceAll('"scopeSpans"', '"scope_spans"')
        .replaceAll('"startTimeUnixNano"', '"start_time_unix_nano"')
        .replaceAll('"traceId"', '"trace_id"'),
    );
    const read = await mapPresetFiles(dir.path, 'otlp', { 'snake.json': JSON.stringify(snake) });
    expect(read.events.map(defined)).toEqual(received(first));
    const bad = doc({ 'service.name': 'bot' }, [{ ...span('c1', 0, 1, {}), traceId: 'trace-1' }]);
    const { rejections } = await mapPresetFiles(dir.path, 'otlp', {
      'bad.json': JSON.stringify(bad),
      'x.json': '{"spans": []}',
    });
    expect(rejections).toEqual([
      {
        where: 'bad.json:1',
        reason: 'resourceSpans[0].scopeSpans[0].spans[0].traceId: must be 16 bytes as hex',
      },
      { where: 'x.json:1', reason: 'not an OTLP trace document: no resourceSpans' },
    ]);
  });
});
