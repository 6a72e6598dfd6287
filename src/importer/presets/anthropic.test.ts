import { afterAll, describe, expect, it } from 'vitest';
import { jsonl, mapPresetFiles, prop } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';

const dir = tempDir('cas-anthropic-');
afterAll(() => dir.cleanup());

const model = 'claude-sonnet-4-20250514';
const q = { role: 'user', content: 'Weather in Oslo?' };
const use = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'tu1', name: 'weather', input: { city: 'Oslo' } },
  ],
};
const result = {
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'snow' }] }],
};
const response = (id: string, content: unknown[], stop: string, usage: unknown) => ({
  id,
  type: 'message',
  role: 'assistant',
  model,
  content,
  stop_reason: stop,
  usage,
});

describe('anthropic preset', () => {
  it('adds cache writes and reads to prompt_tokens, maps tool_use/tool_result to function calls', async () => {
    const log = jsonl([
      {
        timestamp: '2025-03-07T08:00:00Z',
        request: { model, metadata: { user_id: 'cleo' }, messages: [q] },
        response: response('m1', use.content, 'tool_use', {
          input_tokens: 50,
          cache_creation_input_tokens: 2000,
          cache_read_input_tokens: 0,
          output_tokens: 40,
        }),
      },
      {
        timestamp: 1_741_334_402.5,
        request: { model, metadata: { user_id: 'cleo' }, messages: [q, use, result] },
        response: response('m2', [{ type: 'text', text: 'Snowing.' }], 'end_turn', {
          input_tokens: 80,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 2000,
          output_tokens: 15,
        }),
      },
      {
        custom_id: 'b1',
        timestamp: '2025-03-07T09:00:00Z',
        result: {
          type: 'succeeded',
          message: response('m3', [{ type: 'text', text: 'Hi' }], 'end_turn', {
            input_tokens: 3,
            output_tokens: 1,
          }),
        },
      },
      { custom_id: 'b2', result: { type: 'errored', error: {} } },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'anthropic', { 'log.jsonl': log }, [
      'user_id=fallback',
    ]);
    expect(rejections).toEqual([{ where: 'log.jsonl:4', reason: 'result: the batch request errored' }]);
    const cleo = { type: 'track', session_id: '(derived)', user_id: 'cleo' };
    expect(events).toEqual([
      {
        ...cleo,
        event: 'Conversation Usage',
        event_id: 'anthropic-m1',
        timestamp: '2025-03-07T08:00:00.000Z',
        properties: { cache_creation_tokens: 2000, completion_tokens: 40, model, prompt_tokens: 2050 },
      },
      {
        ...cleo,
        event: 'Conversation Function',
        event_id: 'anthropic-m2/tu1',
        timestamp: '2025-03-07T08:00:02.500Z',
        properties: { args: '{"city":"Oslo"}', call_id: 'tu1', name: 'weather', result: 'snow' },
      },
      {
        ...cleo,
        event: 'Conversation Turn',
        event_id: 'anthropic-m2',
        timestamp: '2025-03-07T08:00:02.500Z',
        properties: {
          assistant: 'Snowing.',
          assistant_id: 'm2',
          cached_prompt_tokens: 2000,
          completion_tokens: 15,
          model,
          prompt_tokens: 2080,
          user: 'Weather in Oslo?',
        },
      },
      {
        type: 'track',
        session_id: '(derived)',
        user_id: 'fallback',
        event: 'Conversation Turn',
        event_id: 'anthropic-m3',
        timestamp: '2025-03-07T09:00:00.000Z',
        properties: {
          assistant: 'Hi',
          assistant_id: 'm3',
          batch: true,
          completion_tokens: 1,
          model,
          prompt_tokens: 3,
          user: '',
        },
      },
    ]);
  });

  it('a last user message without text is still the user turn: tool calls of earlier calls are not counted again', async () => {
    const usage = { input_tokens: 100, output_tokens: 10 };
    const reply = { role: 'assistant', content: [{ type: 'text', text: 'Snowing.' }] };
    const image = {
      role: 'user',
      content: [{ type: 'image', source: { type: 'url', url: 'https://x/cat.png' } }],
    };
    const log = jsonl([
      {
        timestamp: '2025-03-07T08:00:02Z',
        request: { metadata: { user_id: 'cleo' }, messages: [q, use, result] },
        response: response('m2', reply.content, 'end_turn', usage),
      },
      {
        timestamp: '2025-03-07T08:01:00Z',
        request: { metadata: { user_id: 'cleo' }, messages: [q, use, result, reply, image] },
        response: response('m3', [{ type: 'text', text: 'A cat.' }], 'end_turn', usage),
      },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'anthropic', { 'img.jsonl': log });
    expect(rejections).toEqual([]);
    expect(events.map((e) => [e.event, e.timestamp, prop(e, 'user') ?? prop(e, 'call_id')])).toEqual([
      ['Conversation Function', '2025-03-07T08:00:02.000Z', 'tu1'],
      ['Conversation Turn', '2025-03-07T08:00:02.000Z', 'Weather in Oslo?'],
      ['Conversation Turn', '2025-03-07T08:01:00.000Z', ''],
    ]);
  });

  it('tool results sent with the next user text belong to the call answering that text, and so does the question that began the round', async () => {
    const mixed = {
      role: 'user',
      content: [...result.content, { type: 'text', text: 'And in Bergen?' }],
    };
    const log = jsonl([
      {
        timestamp: '2025-03-07T08:00:02Z',
        request: { metadata: { user_id: 'cleo' }, messages: [q, use, mixed] },
        response: response('m2', [{ type: 'text', text: 'Snow in both.' }], 'end_turn', {
          input_tokens: 100,
          output_tokens: 10,
        }),
      },
    ]);
    const { events } = await mapPresetFiles(dir.path, 'anthropic', { 'mixed.jsonl': log });
    expect(events.map((e) => [e.event, prop(e, 'user') ?? prop(e, 'result')])).toEqual([
      ['Conversation Function', 'snow'],
      // The first call only asked for the tool (a usage record): its question was lost (probe).
      ['Conversation Turn', 'Weather in Oslo?\n\nAnd in Bergen?'],
    ]);
  });

  it('reads the cache writes that live an hour apart (Anthropic prices them at twice the input rate)', async () => {
    const log = jsonl([
      {
        timestamp: '2025-03-07T08:00:00Z',
        request: { model, metadata: { user_id: 'cleo' }, messages: [q] },
        response: response('m1', [{ type: 'text', text: 'Snow.' }], 'end_turn', {
          input_tokens: 10,
          cache_creation_input_tokens: 10_000,
          cache_read_input_tokens: 0,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 10_000 },
          output_tokens: 10,
        }),
      },
    ]);
    const { events } = await mapPresetFiles(dir.path, 'anthropic', { 'hour.jsonl': log });
    expect(events[0]?.properties).toMatchObject({
      prompt_tokens: 10_010,
      cache_creation_tokens: 10_000,
      cache_creation_1h_tokens: 10_000,
    });
  });

  // Stored with user '' and the reply without its start (found by probing).
  it('a request ending in a prefill: the turn is the user message before it, the reply continues the prefill', async () => {
    const log = jsonl([
      {
        timestamp: '2025-03-07T08:00:00Z',
        request: {
          model,
          metadata: { user_id: 'cleo' },
          messages: [
            { role: 'user', content: 'Give me a JSON object with a name' },
            { role: 'assistant', content: '{' },
          ],
        },
        response: response('m1', [{ type: 'text', text: '"name": "Bob"}' }], 'end_turn', {
          input_tokens: 12,
          output_tokens: 6,
        }),
      },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'anthropic', { 'prefill.jsonl': log });
    expect(rejections).toEqual([]);
    expect(events.map((e) => [prop(e, 'user'), prop(e, 'assistant')])).toEqual([
      ['Give me a JSON object with a name', '{"name": "Bob"}'],
    ]);
  });

  it('names a call’s records after its message id: two tool-only calls are two usage events', async () => {
    const usage = { input_tokens: 100, output_tokens: 10 };
    const asks = (id: string, toolId: string) => ({
      timestamp: '2025-03-07T08:00:00Z',
      request: { metadata: { user_id: 'cleo' }, messages: [q] },
      response: response(id, [{ ...use.content[1], id: toolId }], 'tool_use', usage),
    });
    const log = jsonl([
      asks('msg_1', 'tu0'),
      asks('msg_1b', 'tu0b'),
      {
        timestamp: '2025-03-07T08:00:02Z',
        request: { metadata: { user_id: 'cleo' }, messages: [q, use, result] },
        response: response('msg 2', [{ type: 'text', text: 'Snowing.' }], 'end_turn', usage),
      },
    ]);
    const { events } = await mapPresetFiles(dir.path, 'anthropic', { 'ids.jsonl': log });
    expect(events.map((e) => [e.event, e.event_id])).toEqual([
      ['Conversation Usage', 'anthropic-msg_1'],
      ['Conversation Usage', 'anthropic-msg_1b'],
      // An id with other characters than letters, digits and _.- is hashed.
      ['Conversation Function', expect.stringMatching(/^anthropic~[\w-]{43}$/)],
      ['Conversation Turn', expect.stringMatching(/^anthropic~[\w-]{43}$/)],
    ]);
    expect(events[2]?.event_id).not.toBe(events[3]?.event_id);
  });

  it('reads a timestamp without a zone in --tz', async () => {
    const line = (timestamp: string) => ({
      timestamp,
      request: { metadata: { user_id: 'cleo' }, messages: [q] },
      response: response(`m-${timestamp}`, [{ type: 'text', text: 'Hi' }], 'end_turn', {}),
    });
    const log = jsonl([
      line('2025-03-07 08:00:00'),
      line('2025-07-07T08:00:00'),
      line('2025-03-07T08:00:00Z'),
    ]);
    const { events } = await mapPresetFiles(dir.path, 'anthropic', { 'tz.jsonl': log }, [], 'Europe/Berlin');
    expect(events.map((e) => e.timestamp)).toEqual([
      '2025-03-07T07:00:00.000Z',
      '2025-07-07T06:00:00.000Z',
      '2025-03-07T08:00:00.000Z',
    ]);
  });

  it('rejects a call without its time: an import never invents one', async () => {
    const log = jsonl([
      {
        request: { metadata: { user_id: 'cleo' }, messages: [q] },
        response: response('m1', [{ type: 'text', text: 'Hi' }], 'end_turn', {}),
      },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'anthropic', { 'notime.jsonl': log });
    expect(events).toEqual([]);
    expect(rejections).toEqual([
      {
        where: 'notime.jsonl:1',
        reason: 'timestamp: missing (and no created_at): the time of the call, which an import never invents',
      },
    ]);
  });

  it('names a bad timestamp', async () => {
    const log = jsonl([
      { timestamp: 'yesterday', response: response('m', [], 'end_turn', {}) },
      { created_at: 'today', response: response('m', [], 'end_turn', {}) },
    ]);
    const { rejections } = await mapPresetFiles(dir.path, 'anthropic', { 'x.jsonl': log });
    expect(rejections).toEqual([
      {
        where: 'x.jsonl:1',
        reason: 'timestamp: timestamp "yesterday" is not ISO 8601 or epoch seconds/milliseconds',
      },
      {
        where: 'x.jsonl:2',
        reason: 'created_at: timestamp "today" is not ISO 8601 or epoch seconds/milliseconds',
      },
    ]);
  });
});
