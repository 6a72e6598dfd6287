import { afterAll, describe, expect, it } from 'vitest';
import { jsonl, mapPresetFiles, prop } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';

const dir = tempDir('cas-openai-chat-');
afterAll(() => dir.cleanup());

const T = 1_741_168_800; // 2025-03-05T10:00:00Z
const q = { role: 'user', content: 'Where is order 42?' };
const call = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_order', arguments: '{"id":42}' } }],
};
const answer = { role: 'tool', tool_call_id: 'call_1', content: 'shipped' };
const completion = (id: string, created: number, message: unknown, usage: unknown, finish = 'stop') => ({
  id,
  object: 'chat.completion',
  created,
  model: 'gpt-4o-2024-08-06',
  choices: [{ index: 0, message, finish_reason: finish }],
  usage,
});

describe('openai-chat preset', () => {
  it('maps calls to turns with cached and reasoning tokens, tool rounds to function calls and usage', async () => {
    const log = jsonl([
      {
        request: { model: 'gpt-4o', user: 'ana', messages: [q] },
        response: completion('c1', T, call, { prompt_tokens: 1200, completion_tokens: 20 }, 'tool_calls'),
      },
      {
        request: { model: 'gpt-4o', user: 'ana', messages: [q, call, answer] },
        response: completion(
          'c2',
          T + 2,
          { role: 'assistant', content: 'It shipped.' },
          { prompt_tokens: 2048, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 1024 } },
        ),
      },
      {
        request: {
          model: 'o3-mini',
          metadata: { user_id: 'ben', session_id: 's-9', conversation_id: 'k-9' },
          messages: [{ role: 'user', content: [{ type: 'text', text: 'Prime?' }] }],
        },
        response: {
          ...completion(
            'c3',
            T + 60,
            { role: 'assistant', content: 'No.' },
            {
              prompt_tokens: 15,
              completion_tokens: 400,
              completion_tokens_details: { reasoning_tokens: 384 },
              prompt_tokens_details: { cached_tokens: 0 },
            },
          ),
          model: 'o3-mini',
        },
      },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'log.jsonl': log });
    expect(rejections).toEqual([]);
    const ana = { type: 'track', session_id: '(derived)', user_id: 'ana' };
    expect(events).toEqual([
      {
        ...ana,
        event: 'Conversation Usage',
        event_id: 'openai-chat-c1',
        timestamp: '2025-03-05T10:00:00.000Z',
        properties: { completion_tokens: 20, model: 'gpt-4o-2024-08-06', prompt_tokens: 1200 },
      },
      {
        ...ana,
        event: 'Conversation Function',
        event_id: 'openai-chat-c2/call_1',
        timestamp: '2025-03-05T10:00:02.000Z',
        properties: { args: '{"id":42}', call_id: 'call_1', name: 'get_order', result: 'shipped' },
      },
      {
        ...ana,
        event: 'Conversation Turn',
        event_id: 'openai-chat-c2',
        timestamp: '2025-03-05T10:00:02.000Z',
        properties: {
          assistant: 'It shipped.',
          assistant_id: 'c2',
          cached_prompt_tokens: 1024,
          completion_tokens: 12,
          model: 'gpt-4o-2024-08-06',
          prompt_tokens: 2048,
          user: 'Where is order 42?',
        },
      },
      {
        type: 'track',
        event: 'Conversation Turn',
        event_id: 'openai-chat-c3',
        timestamp: '2025-03-05T10:01:00.000Z',
        session_id: 's-9',
        conversation_id: 'k-9',
        user_id: 'ben',
        properties: {
          assistant: 'No.',
          assistant_id: 'c3',
          completion_tokens: 400,
          model: 'o3-mini',
          prompt_tokens: 15,
          reasoning_tokens: 384,
          user: 'Prime?',
        },
      },
    ]);
  });

  // It read `response: user_id: …`: the wire's field under the turn's place (found by probing).
  it('names a refused id by where the line gave it', async () => {
    const log = jsonl([
      {
        request: { model: 'gpt-4o', user: 'u'.repeat(101), messages: [q] },
        response: completion(
          'c1',
          T,
          { role: 'assistant', content: 'hi' },
          { prompt_tokens: 1, completion_tokens: 1 },
        ),
      },
      {
        request: { model: 'gpt-4o', user: 'ana', metadata: { session_id: 's'.repeat(101) }, messages: [q] },
        response: completion(
          'c2',
          T,
          { role: 'assistant', content: 'hi' },
          { prompt_tokens: 1, completion_tokens: 1 },
        ),
      },
    ]);
    const { rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'ids.jsonl': log });
    expect(rejections.map((r) => r.reason)).toEqual([
      'request.user: must be at most 100 characters',
      'request.metadata.session_id: must be at most 100 characters',
    ]);
  });

  // Refused as "no response in this line" (found by probing).
  it('assembles a streamed call logged as its chunks; a chunk on a line of its own is refused, saying why', async () => {
    const chunk = (id: string, delta: unknown, finish: string | null = null, usage?: unknown) => ({
      id,
      object: 'chat.completion.chunk',
      created: T,
      model: 'gpt-4o-2024-08-06',
      choices: usage === undefined ? [{ index: 0, delta, finish_reason: finish }] : [],
      ...(usage === undefined ? {} : { usage }),
    });
    const toolPiece = (args: string, first = false) => ({
      tool_calls: [
        {
          index: 0,
          ...(first ? { id: 'call_9', type: 'function' } : {}),
          function: { ...(first ? { name: 'get_order' } : {}), arguments: args },
        },
      ],
    });
    const log = jsonl([
      {
        request: { model: 'gpt-4o', user: 'ana', stream: true, messages: [q] },
        response: [
          chunk('s1', { role: 'assistant', content: null, ...toolPiece('{"id"', true) }),
          chunk('s1', toolPiece(':42}')),
          chunk('s1', {}, 'tool_calls'),
          chunk('s1', {}, null, { prompt_tokens: 30, completion_tokens: 5 }),
        ],
      },
      {
        request: {
          model: 'gpt-4o',
          user: 'ana',
          stream: true,
          messages: [
            q,
            {
              ...call,
              tool_calls: [
                { id: 'call_9', type: 'function', function: { name: 'get_order', arguments: '{"id":42}' } },
              ],
            },
            { ...answer, tool_call_id: 'call_9' },
          ],
        },
        response: [
          chunk('s2', { role: 'assistant', content: '' }),
          chunk('s2', { content: 'It has ' }),
          chunk('s2', { content: 'shipped.' }, 'stop'),
          chunk('s2', {}, null, { prompt_tokens: 60, completion_tokens: 4 }),
        ],
      },
      chunk('s3', { content: 'alone' }),
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'stream.jsonl': log });
    expect(
      events.map((e) => [
        e.event,
        prop(e, 'assistant') ?? prop(e, 'args') ?? null,
        prop(e, 'prompt_tokens') ?? null,
      ]),
    ).toEqual([
      ['Conversation Usage', null, 30],
      ['Conversation Function', '{"id":42}', null],
      ['Conversation Turn', 'It has shipped.', 60],
    ]);
    expect(rejections.map((r) => r.reason)).toEqual([
      expect.stringContaining('one chunk of a streamed call: log the call whole'),
    ]);
  });

  it('pairs Batch API output with its input file by custom_id, whichever is read first; failures are rejected', async () => {
    const input = jsonl([
      {
        custom_id: 'r1',
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'gpt-4o-mini', messages: [q] },
      },
    ]);
    const output = jsonl([
      {
        id: 'b1',
        custom_id: 'r1',
        response: {
          status_code: 200,
          body: completion(
            'cb',
            T,
            { role: 'assistant', content: 'Shipped.' },
            { prompt_tokens: 10, completion_tokens: 2 },
          ),
        },
      },
      {
        id: 'b2',
        custom_id: 'r2',
        response: { status_code: 500, body: {} },
        error: { message: 'server error' },
      },
    ]);
    const { events, rejections } = await mapPresetFiles(
      dir.path,
      'openai-chat',
      { 'output.jsonl': output, 'input.jsonl': input },
      ['user_id=batcher'],
    );
    expect(rejections).toEqual([
      { where: 'output.jsonl:2', reason: 'response: the batch request failed: server error' },
    ]);
    expect(events).toEqual([
      {
        type: 'track',
        event: 'Conversation Turn',
        event_id: 'openai-chat-cb',
        timestamp: '2025-03-05T10:00:00.000Z',
        session_id: '(derived)',
        user_id: 'batcher',
        properties: {
          assistant: 'Shipped.',
          assistant_id: 'cb',
          batch: true,
          completion_tokens: 2,
          model: 'gpt-4o-2024-08-06',
          prompt_tokens: 10,
          user: 'Where is order 42?',
        },
      },
    ]);
  });

  it('a last user message without text is still the user turn: tool calls of earlier calls are not counted again', async () => {
    const reply = { role: 'assistant', content: 'It shipped.' };
    const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/cat.png' } }] };
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    const log = jsonl([
      {
        request: { user: 'ana', messages: [q, call, answer] },
        response: completion('c2', T + 2, reply, usage),
      },
      {
        request: { user: 'ana', messages: [q, call, answer, reply, image] },
        response: completion('c3', T + 60, { role: 'assistant', content: 'A cat.' }, usage),
      },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'img.jsonl': log });
    expect(rejections).toEqual([]);
    expect(events.map((e) => [e.event, e.timestamp, prop(e, 'user') ?? prop(e, 'call_id')])).toEqual([
      ['Conversation Function', '2025-03-05T10:00:02.000Z', 'call_1'],
      ['Conversation Turn', '2025-03-05T10:00:02.000Z', 'Where is order 42?'],
      ['Conversation Turn', '2025-03-05T10:01:00.000Z', ''],
    ]);
  });

  it('a tool round the next user message interrupted belongs to the call answering that message, and so does the question that began it', async () => {
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    const more = { role: 'user', content: 'And order 43?' };
    const log = jsonl([
      {
        request: { user: 'ana', messages: [q, call, answer, more] },
        response: completion('c2', T + 2, { role: 'assistant', content: 'Both shipped.' }, usage),
      },
    ]);
    const { events } = await mapPresetFiles(dir.path, 'openai-chat', { 'cut.jsonl': log });
    expect(events.map((e) => [e.event, prop(e, 'user') ?? prop(e, 'result')])).toEqual([
      ['Conversation Function', 'shipped'],
      // The first call only asked for the tool (no turn): its question is this turn's too.
      ['Conversation Turn', 'Where is order 42?\n\nAnd order 43?'],
    ]);
  });

  it("keeps a batch request's question across the tool round its reply answers", async () => {
    const more = { role: 'user', content: 'And order 43?' };
    const earlier = [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi!' },
    ];
    const input = jsonl([{ custom_id: 'r7', body: { messages: [...earlier, q, call, answer, more] } }]);
    const output = jsonl([
      {
        custom_id: 'r7',
        response: {
          status_code: 200,
          body: completion('cb7', T, { role: 'assistant', content: 'Both shipped.' }, {}),
        },
      },
    ]);
    const { events } = await mapPresetFiles(
      dir.path,
      'openai-chat',
      { 'o.jsonl': output, 'i.jsonl': input },
      ['user_id=batcher'],
    );
    expect(events.map((e) => [e.event, prop(e, 'user') ?? prop(e, 'result')])).toEqual([
      ['Conversation Function', 'shipped'],
      ['Conversation Turn', 'Where is order 42?\n\nAnd order 43?'],
    ]);
  });

  it('names a call’s records after its response id: two tool-only calls are two usage events', async () => {
    const usage = { prompt_tokens: 1200, completion_tokens: 20 };
    const asks = (id: string, callId: string) => ({
      request: { user: 'ana', messages: [q] },
      response: completion(
        id,
        T,
        { ...call, tool_calls: [{ ...call.tool_calls[0], id: callId }] },
        usage,
        'tool_calls',
      ),
    });
    const log = jsonl([
      asks('chatcmpl-1', 'call_1'),
      asks('chatcmpl-1b', 'call_1b'),
      {
        request: { user: 'ana', messages: [q, call, answer] },
        response: completion('chatcmpl-2', T + 2, { role: 'assistant', content: 'It shipped.' }, usage),
      },
    ]);
    const { events } = await mapPresetFiles(dir.path, 'openai-chat', { 'ids.jsonl': log });
    expect(events.map((e) => [e.event, e.event_id])).toEqual([
      ['Conversation Usage', 'openai-chat-chatcmpl-1'],
      ['Conversation Usage', 'openai-chat-chatcmpl-1b'],
      ['Conversation Function', 'openai-chat-chatcmpl-2/call_1'],
      ['Conversation Turn', 'openai-chat-chatcmpl-2'],
    ]);
  });

  it('a call keeps its event id whatever else is read with it; a line without a response id is named by its content', async () => {
    const reply = { role: 'assistant', content: 'Shipped.' };
    const usage = { prompt_tokens: 10, completion_tokens: 2 };
    const output = jsonl([
      { custom_id: 'r1', response: { status_code: 200, body: completion('cb', T, reply, usage) } },
    ]);
    const input = jsonl([{ custom_id: 'r1', body: { model: 'gpt-4o-mini', user: 'ana', messages: [q] } }]);
    const alone = await mapPresetFiles(dir.path, 'openai-chat', { 'out.jsonl': output }, ['user_id=me']);
    const paired = await mapPresetFiles(dir.path, 'openai-chat', { 'out.jsonl': output, 'in.jsonl': input });
    expect([prop(alone.events[0]!, 'user'), prop(paired.events[0]!, 'user')]).toEqual(['', q.content]);
    expect(paired.events.map((e) => e.event_id)).toEqual(alone.events.map((e) => e.event_id));
    expect(alone.events.map((e) => e.event_id)).toEqual(['openai-chat-cb']);

    const bare = (created: number) => ({
      ...completion('', created, call, usage, 'tool_calls'),
      id: undefined,
    });
    const { events } = await mapPresetFiles(
      dir.path,
      'openai-chat',
      { 'bare.jsonl': jsonl([bare(T), bare(T + 1), bare(T)]) },
      ['user_id=me'],
    );
    const ids = events.map((e) => e.event_id);
    expect(ids).toEqual([expect.stringMatching(/^openai-chat~[\w-]{43}$/), expect.any(String), ids[0]]);
    expect(ids[1]).not.toBe(ids[0]);
  });

  it('rejects a call without its time: an import never invents one', async () => {
    const reply = { role: 'assistant', content: 'Hi' };
    const log = jsonl([
      {
        request: { messages: [q] },
        response: { ...completion('c1', T, reply, undefined), created: undefined },
      },
      { ...completion('c2', T, reply, undefined), created: 'yesterday' },
      { custom_id: 'r1', response: { status_code: 200, body: { ...completion('c3', 0, reply, undefined) } } },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'notime.jsonl': log }, [
      'user_id=u',
    ]);
    expect(events).toEqual([]);
    expect(rejections).toEqual([
      {
        where: 'notime.jsonl:1',
        reason: 'response.created: missing: the time of the call, which an import never invents',
      },
      { where: 'notime.jsonl:2', reason: 'created: "yesterday" is not a time in epoch seconds' },
      { where: 'notime.jsonl:3', reason: 'response.body.created: 0 is not a time in epoch seconds' },
    ]);
  });

  it('reads a created written in milliseconds as milliseconds (as seconds it named the year 57,000)', async () => {
    const log = jsonl([
      {
        request: { messages: [q] },
        response: completion('c1', T * 1000, { role: 'assistant', content: 'Hi' }, undefined),
      },
    ]);
    const { events } = await mapPresetFiles(dir.path, 'openai-chat', { 'ms.jsonl': log }, ['user_id=u']);
    expect(events.map((e) => e.timestamp)).toEqual(['2025-03-05T10:00:00.000Z']);
  });

  it('reads legacy function_call messages and their role:function answers as function calls', async () => {
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    const weather = { role: 'user', content: 'Weather?' };
    const asks = {
      role: 'assistant',
      content: 'Checking.',
      function_call: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
    };
    const answers = { role: 'function', name: 'get_weather', content: 'rain' };
    const log = jsonl([
      {
        request: { user: 'ana', messages: [weather] },
        response: completion('c1', T, asks, usage, 'function_call'),
      },
      {
        request: { user: 'ana', messages: [weather, asks, answers] },
        response: completion('c2', T + 2, { role: 'assistant', content: 'It rains.' }, usage),
      },
    ]);
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'legacy.jsonl': log });
    expect(rejections).toEqual([]);
    expect(events.map((e) => [e.event, e.timestamp, e.properties])).toEqual([
      ['Conversation Usage', '2025-03-05T10:00:00.000Z', { model: 'gpt-4o-2024-08-06', ...usage }],
      [
        'Conversation Function',
        '2025-03-05T10:00:02.000Z',
        { name: 'get_weather', args: '{"city":"Oslo"}', result: 'rain' },
      ],
      [
        'Conversation Turn',
        '2025-03-05T10:00:02.000Z',
        {
          user: 'Weather?',
          assistant: 'It rains.',
          assistant_id: 'c2',
          model: 'gpt-4o-2024-08-06',
          ...usage,
        },
      ],
    ]);
  });

  it('reports a bad line by file:line and reads the next', async () => {
    const log = `not json\n${jsonl([completion('c9', T, { role: 'assistant', content: 'Hi' }, undefined)])}`;
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-chat', { 'bad.jsonl': log }, [
      'user_id=u',
    ]);
    expect(rejections).toEqual([{ where: 'bad.jsonl:1', reason: expect.stringMatching(/^not valid JSON/) }]);
    expect(events.map((e) => e.properties)).toEqual([
      { assistant: 'Hi', assistant_id: 'c9', model: 'gpt-4o-2024-08-06', user: '' },
    ]);
  });
});
