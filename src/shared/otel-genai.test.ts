import { describe, expect, it } from 'vitest';
import { parseQueueBody } from './events.js';
import { mapGenAiSpan, nanosToIso, type OtelSpan } from './otel-genai.js';
import { otlpSpans } from './otlp-spans.js';

const T0 = 1_735_732_800_000; // 2025-01-01T12:00:00Z
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

function span(attributes: OtelSpan['attributes'], extra: Partial<OtelSpan> = {}): OtelSpan {
  return {
    traceId: 'a'.repeat(32),
    spanId: 'b'.repeat(16),
    name: 'chat gpt-4o',
    startTimeUnixNano: ns(T0),
    endTimeUnixNano: ns(T0 + 1500),
    attributes,
    resource: { 'service.name': 'bot' },
    events: [],
    ...extra,
  };
}

/** The mapped event must be one the queue route accepts. */
function valid(event: Record<string, unknown>) {
  const r = parseQueueBody([event]);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return event;
}

describe('mapGenAiSpan', () => {
  it('maps a chat span of the current conventions to a turn with token details', () => {
    const m = mapGenAiSpan(
      span({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 80,
        'gen_ai.usage.cache_read.input_tokens': 1024,
        'gen_ai.conversation.id': 'conv-1',
        'session.id': 'sess-1',
        'user.id': 'u1',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
          { role: 'user', parts: [{ type: 'text', content: 'hello?' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'hi!' }], finish_reason: 'stop' },
        ]),
      }),
    );
    expect(m.kind).toBe('turn');
    if (m.kind === 'skip') return;
    expect(valid(m.event)).toEqual({
      type: 'track',
      event: 'Conversation Turn',
      event_id: `otel-${'a'.repeat(32)}-${'b'.repeat(16)}`,
      session_id: 'sess-1',
      conversation_id: 'conv-1',
      user_id: 'u1',
      timestamp: '2025-01-01T12:00:00.000Z',
      properties: {
        user: 'hello?',
        assistant: 'hi!',
        model: 'gpt-4o-2024-08-06',
        prompt_tokens: 1200,
        completion_tokens: 80,
        cached_prompt_tokens: 1024,
        provider: 'openai',
        trace_id: 'a'.repeat(32),
        span_id: 'b'.repeat(16),
      },
    });
  });

  it('reads the older gen_ai.prompt.N / completion.N attributes and adds back cache counts excluded from input', () => {
    const m = mapGenAiSpan(
      span({
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-3-5-sonnet-20241022',
        'llm.request.type': 'chat',
        'gen_ai.usage.prompt_tokens': 10,
        'gen_ai.usage.completion_tokens': 20,
        'gen_ai.usage.cache_read_input_tokens': 300,
        'gen_ai.usage.cache_creation_input_tokens': 50,
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'first',
        'gen_ai.prompt.1.role': 'assistant',
        'gen_ai.prompt.1.content': 'answer',
        'gen_ai.prompt.2.role': 'user',
        'gen_ai.prompt.2.content': 'second',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'done',
      }),
    );
    if (m.kind === 'skip') throw new Error(m.reason);
    valid(m.event);
    expect(m.event).toMatchObject({
      session_id: `trace-${'a'.repeat(32)}`,
      device_id: `otel:bot:trace-${'a'.repeat(32)}`,
    });
    expect(m.event.properties).toMatchObject({
      user: 'second',
      assistant: 'done',
      prompt_tokens: 10 + 300 + 50,
      completion_tokens: 20,
      cached_prompt_tokens: 300,
      cache_creation_tokens: 50,
    });
  });

  it('reads OpenInference llm.* attributes', () => {
    const m = mapGenAiSpan(
      span({
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'o3-mini',
        'llm.token_count.prompt': 100,
        'llm.token_count.completion': 900,
        'llm.token_count.completion_details.reasoning': 700,
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'think',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': 'thought',
      }),
    );
    if (m.kind === 'skip') throw new Error(m.reason);
    valid(m.event);
    expect(m.event.properties).toMatchObject({
      user: 'think',
      assistant: 'thought',
      model: 'o3-mini',
      prompt_tokens: 100,
      completion_tokens: 900,
      reasoning_tokens: 700,
    });
  });

  it('maps execute_tool spans to function calls, failures included, and skips agent and non-GenAI spans', () => {
    const tool = mapGenAiSpan(
      span(
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.tool.call.arguments': '{"city":"Paris"}',
          'session.id': 's',
        },
        { statusCode: 2, statusMessage: 'timeout', name: 'execute_tool get_weather' },
      ),
    );
    if (tool.kind === 'skip') throw new Error(tool.reason);
    valid(tool.event);
    expect(tool.event).toMatchObject({ event: 'Conversation Function', session_id: 's' });
    expect(tool.event.properties).toMatchObject({
      name: 'get_weather',
      args: '{"city":"Paris"}',
      runtime: 1500,
      error: 'timeout',
    });
    expect(
      mapGenAiSpan(span({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.request.model': 'x' })).kind,
    ).toBe('skip');
    expect(mapGenAiSpan(span({ 'http.request.method': 'GET' })).kind).toBe('skip');
  });

  it('maps a chat call that only asks for tools to usage, as the API-log presets do; one that answers stays a turn', () => {
    const toolCall = {
      role: 'assistant',
      parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
      finish_reason: 'tool_call',
    };
    const chat = (extra: OtelSpan['attributes']) =>
      mapGenAiSpan(
        span({
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.usage.output_tokens': 20,
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
          ]),
          ...extra,
        }),
      );
    for (const asks of [
      { 'gen_ai.output.messages': JSON.stringify([toolCall]) },
      { 'gen_ai.response.finish_reasons': ['tool_calls'] },
    ]) {
      const m = chat(asks);
      if (m.kind === 'skip') throw new Error(m.reason);
      valid(m.event);
      expect(m.event).toMatchObject({
        event: 'Conversation Usage',
        properties: { model: 'gpt-4o', prompt_tokens: 100, completion_tokens: 20 },
      });
    }
    // Content not captured (the conventions' default): no text, no tool call said, still a turn.
    expect(chat({})).toMatchObject({ kind: 'turn', event: { event: 'Conversation Turn' } });
    const answered = chat({
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: "It's rainy." }], finish_reason: 'stop' },
      ]),
    });
    expect(answered).toMatchObject({ kind: 'turn', event: { properties: { assistant: "It's rainy." } } });
  });

  // Found by probing: only the current conventions' and the Vercel AI SDK's forms were read, so a
  // tool round under OpenLLMetry, OpenInference or the older gen_ai.choice event was an empty turn.
  it("takes a reply that only calls tools for usage in OpenLLMetry's, OpenInference's and the choice event's forms", () => {
    const tokens = { 'gen_ai.usage.prompt_tokens': 50, 'gen_ai.usage.completion_tokens': 10 };
    const openllmetry = {
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      ...tokens,
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'weather?',
      'gen_ai.completion.0.role': 'assistant',
    };
    const openinference = {
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'gpt-4o',
      'llm.token_count.prompt': 50,
      'llm.token_count.completion': 10,
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'weather?',
      'llm.output_messages.0.message.role': 'assistant',
    };
    const chat = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', ...tokens };
    const asked = (message: OtelSpan['events'][number]['attributes']) =>
      span(chat, {
        events: [
          { name: 'gen_ai.user.message', timeUnixNano: ns(T0), attributes: { content: 'weather?' } },
          { name: 'gen_ai.choice', timeUnixNano: ns(T0), attributes: message },
        ],
      });
    const spans = [
      span({ ...openllmetry, 'gen_ai.completion.0.finish_reason': 'tool_calls' }),
      span({ ...openllmetry, 'gen_ai.completion.0.tool_calls.0.name': 'get_weather' }),
      span({
        ...openinference,
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      }),
      asked({ finish_reason: 'tool_calls', message: { tool_calls: [{ id: 'c1' }] } }),
      asked({ message: { tool_calls: [{ id: 'c1' }] } }),
    ];
    for (const s of spans) {
      const m = mapGenAiSpan(s);
      if (m.kind === 'skip') throw new Error(m.reason);
      expect(m.event).toMatchObject({ event: 'Conversation Usage', properties: { model: 'gpt-4o' } });
    }
    // A finish reason that is no tool call, or a reply with text, stays a turn.
    expect(mapGenAiSpan(span({ ...openllmetry, 'gen_ai.completion.0.finish_reason': 'stop' }))).toMatchObject(
      {
        kind: 'turn',
      },
    );
    expect(mapGenAiSpan(asked({ finish_reason: 'stop', message: { content: 'Sunny.' } }))).toMatchObject({
      kind: 'turn',
      event: { properties: { assistant: 'Sunny.' } },
    });
  });

  it('names a user-less span by device.id, else by a device of its own session, never one of the whole service', () => {
    const tool = (session: string, extra: OtelSpan['attributes'] = {}) =>
      mapGenAiSpan(
        span({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'lookup',
          'session.id': session,
          ...extra,
        }),
      );
    const a = tool('s-1');
    const b = tool('s-2');
    if (a.kind === 'skip' || b.kind === 'skip') throw new Error('skipped');
    expect(valid(a.event).device_id).toBe('otel:bot:s-1');
    expect(b.event.device_id).toBe('otel:bot:s-2');
    expect(a.event).not.toHaveProperty('user_id');
    const named = tool('s-3', { 'device.id': 'phone-7' });
    expect(named.kind !== 'skip' && named.event.device_id).toBe('phone-7');
    const fromResource = mapGenAiSpan(
      span(
        { 'gen_ai.operation.name': 'execute_tool', 'session.id': 's-4' },
        { resource: { 'service.name': 'bot', 'device.id': 'tablet-1' } },
      ),
    );
    expect(fromResource.kind !== 'skip' && fromResource.event.device_id).toBe('tablet-1');
    // A session id near the id limit still gives a device id within it.
    const long = tool('s'.repeat(100));
    if (long.kind === 'skip') throw new Error('skipped');
    expect(String(valid(long.event).device_id)).toMatch(/^otel:[0-9a-f]{40}$/);
    expect(tool('s'.repeat(100))).toEqual(long);
  });

  it('leaves out a token count the span does not give, so the cost is not taken as known', () => {
    const only = (attributes: OtelSpan['attributes']) => {
      const m = mapGenAiSpan(
        span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', ...attributes }),
      );
      if (m.kind === 'skip') throw new Error(m.reason);
      return valid(m.event).properties as Record<string, unknown>;
    };
    const output = only({ 'gen_ai.usage.output_tokens': 500 });
    expect(output.completion_tokens).toBe(500);
    expect(output).not.toHaveProperty('prompt_tokens');
    const input = only({ 'gen_ai.usage.input_tokens': 500, 'gen_ai.usage.reasoning.output_tokens': 10 });
    expect(input.prompt_tokens).toBe(500);
    expect(input).not.toHaveProperty('completion_tokens');
    expect(input).not.toHaveProperty('reasoning_tokens');
  });

  it('maps a chat span that names no model to a turn without one; an unnamed span without a model is skipped', () => {
    const chat = mapGenAiSpan(
      span({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'user.id': 'fred' }),
    );
    expect(chat.kind).toBe('turn');
    if (chat.kind === 'skip') return;
    expect(valid(chat.event).properties).not.toHaveProperty('model');
    expect(mapGenAiSpan(span({ 'gen_ai.usage.input_tokens': 3 })).kind).toBe('skip');
  });

  it('maps embeddings to usage', () => {
    const m = mapGenAiSpan(
      span({
        'gen_ai.operation.name': 'embeddings',
        'gen_ai.request.model': 'text-embedding-3-small',
        'gen_ai.usage.input_tokens': 42,
      }),
    );
    if (m.kind === 'skip') throw new Error(m.reason);
    valid(m.event);
    expect(m.event.properties).toMatchObject({ prompt_tokens: 42, completion_tokens: 0 });
  });

  it("maps the Vercel AI SDK's steps, not the generateText span that wraps them and repeats their tokens", () => {
    // Attributes as ai@5's generateText writes them (a tool step, the tool, the answering step).
    const vercel = (operationId: string, extra: OtelSpan['attributes']) =>
      mapGenAiSpan(
        span({
          'ai.operationId': operationId,
          'ai.model.provider': 'openai.chat',
          'ai.model.id': 'gpt-4o',
          'ai.telemetry.metadata.userId': 'erin',
          'ai.telemetry.metadata.sessionId': 'vsess-1',
          ...extra,
        }),
      );
    const asked = JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }]);
    const step = (extra: OtelSpan['attributes']) =>
      vercel('ai.generateText.doGenerate', {
        'gen_ai.system': 'openai.chat',
        'gen_ai.request.model': 'gpt-4o',
        'ai.prompt.messages': asked,
        ...extra,
      });
    const toolStep = step({
      'ai.response.finishReason': 'tool-calls',
      'gen_ai.response.finish_reasons': ['tool-calls'],
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
    });
    expect(toolStep).toMatchObject({
      kind: 'usage',
      event: {
        user_id: 'erin',
        session_id: 'vsess-1',
        properties: { prompt_tokens: 100, completion_tokens: 20 },
      },
    });
    const answer = step({
      'ai.response.finishReason': 'stop',
      'ai.response.text': 'Sunny in Paris.',
      'gen_ai.usage.input_tokens': 150,
      'gen_ai.usage.output_tokens': 30,
    });
    expect(answer).toMatchObject({
      kind: 'turn',
      event: { properties: { user: 'Weather in Paris?', assistant: 'Sunny in Paris.', prompt_tokens: 150 } },
    });
    const tool = vercel('ai.toolCall', {
      'ai.toolCall.name': 'weather',
      'ai.toolCall.args': '{"city":"Paris"}',
    });
    expect(tool).toMatchObject({ kind: 'function', event: { properties: { name: 'weather' } } });
    const wrapper = vercel('ai.generateText', {
      'ai.prompt': '{"prompt":"Weather in Paris?"}',
      'ai.response.text': 'Sunny in Paris.',
      'ai.usage.promptTokens': 150,
      'ai.usage.completionTokens': 30,
    });
    expect(wrapper.kind).toBe('skip');
    const embed = vercel('ai.embed.doEmbed', {
      'ai.model.id': 'text-embedding-3-small',
      'ai.usage.tokens': 9,
    });
    expect(embed).toMatchObject({
      kind: 'usage',
      event: { properties: { prompt_tokens: 9, completion_tokens: 0 } },
    });
    expect(vercel('ai.embed', { 'ai.usage.tokens': 9 }).kind).toBe('skip');
    for (const m of [toolStep, answer, tool, embed]) if (m.kind !== 'skip') valid(m.event);
  });

  it('reads the messages of a gen_ai.client.inference.operation.details event', () => {
    const details = (output: unknown[]) =>
      mapGenAiSpan(
        span(
          {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.usage.input_tokens': 30,
            'gen_ai.usage.output_tokens': 7,
          },
          {
            events: [
              {
                name: 'gen_ai.client.inference.operation.details',
                timeUnixNano: ns(T0 + 1500),
                attributes: {
                  'gen_ai.input.messages': JSON.stringify([
                    { role: 'user', parts: [{ type: 'text', content: 'Where is order 42?' }] },
                  ]),
                  'gen_ai.output.messages': JSON.stringify(output),
                },
              },
            ],
          },
        ),
      );
    const answered = details([
      { role: 'assistant', parts: [{ type: 'text', content: 'It ships today.' }], finish_reason: 'stop' },
    ]);
    expect(answered).toMatchObject({
      kind: 'turn',
      event: { properties: { user: 'Where is order 42?', assistant: 'It ships today.' } },
    });
    const tools = details([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'c1', name: 'track' }],
        finish_reason: 'tool_call',
      },
    ]);
    expect(tools).toMatchObject({ kind: 'usage', event: { properties: { prompt_tokens: 30 } } });
  });

  it('keeps a failed model call as a turn that says why it failed', () => {
    const m = mapGenAiSpan(
      span(
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'error.type': '429',
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: 'will fail' }] },
          ]),
        },
        { statusCode: 2, statusMessage: 'rate limited' },
      ),
    );
    if (m.kind === 'skip') throw new Error(m.reason);
    expect(valid(m.event).properties).toMatchObject({
      user: 'will fail',
      assistant: '',
      error: 'rate limited',
    });
    const ok = mapGenAiSpan(span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' }));
    expect(ok.kind !== 'skip' && 'error' in (ok.event.properties as object)).toBe(false);
  });
});

describe('otlpSpans', () => {
  it('decodes OTLP/JSON attributes, ids and times, and names malformed spans by path', () => {
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bot' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: 'A'.repeat(32),
                  spanId: 'B'.repeat(16),
                  name: 'chat',
                  startTimeUnixNano: ns(T0),
                  endTimeUnixNano: T0 * 1e6 + 5e6,
                  attributes: [
                    { key: 'n', value: { intValue: '7' } },
                    { key: 'f', value: { doubleValue: 0.5 } },
                    { key: 'b', value: { boolValue: true } },
                    { key: 'l', value: { arrayValue: { values: [{ stringValue: 'x' }] } } },
                    { key: 'kv', value: { kvlistValue: { values: [{ key: 'k', value: { intValue: 1 } }] } } },
                  ],
                  status: { code: 'STATUS_CODE_ERROR' },
                },
                { traceId: 'zz', spanId: 'B'.repeat(16), startTimeUnixNano: ns(T0) },
              ],
            },
          ],
        },
      ],
    };
    const { spans, issues } = otlpSpans(body);
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      statusCode: 2,
      attributes: { n: 7, f: 0.5, b: true, l: ['x'], kv: { k: 1 } },
      resource: { 'service.name': 'bot' },
    });
    expect(nanosToIso(spans[0]!.endTimeUnixNano)).toBe('2025-01-01T12:00:00.005Z');
    expect(issues).toEqual([
      { path: 'resourceSpans[0].scopeSpans[0].spans[1].traceId', message: 'must be 16 bytes as hex' },
    ]);
    expect(otlpSpans({ resourceSpans: 3 }).malformed).toContain('resourceSpans');
  });

  // Found by probing: all-zero ids stored every such span under one event id, the rest dropped as
  // its duplicates; a start of 0 (OTLP's unknown) or past any date was stamped on arrival.
  it('refuses all-zero ids and a start time that is unknown or no date can hold, each at its path', () => {
    const span = (over: Record<string, unknown>) => ({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      startTimeUnixNano: ns(T0),
      ...over,
    });
    const { spans, issues } = otlpSpans({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                span({ traceId: '0'.repeat(32) }),
                span({ spanId: '0'.repeat(16) }),
                span({ startTimeUnixNano: '0' }),
                span({ startTimeUnixNano: '100' }),
                span({ startTimeUnixNano: '9000000000000000000000' }),
                span({ startTimeUnixNano: '1000000' }),
                null,
              ],
            },
          ],
        },
      ],
    });
    const at = (i: number, field: string) => `resourceSpans[0].scopeSpans[0].spans[${i}].${field}`;
    const unknown = 'must be a known time: nanoseconds since 1970-01-01 (0 is unknown in OTLP)';
    expect(issues).toEqual([
      { path: at(0, 'traceId'), message: 'must not be all zeroes (an invalid id in OTLP)' },
      { path: at(1, 'spanId'), message: 'must not be all zeroes (an invalid id in OTLP)' },
      { path: at(2, 'startTimeUnixNano'), message: unknown },
      { path: at(3, 'startTimeUnixNano'), message: unknown },
      { path: at(4, 'startTimeUnixNano'), message: unknown },
      // No stray dot after the path of a span that is no object.
      { path: 'resourceSpans[0].scopeSpans[0].spans[6]', message: expect.any(String) },
    ]);
    // One millisecond after the epoch is a time like any other.
    expect(spans.map((s) => nanosToIso(s.startTimeUnixNano))).toEqual(['1970-01-01T00:00:00.001Z']);
  });
});
