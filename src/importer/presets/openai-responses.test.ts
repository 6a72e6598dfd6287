import { afterAll, describe, expect, it } from 'vitest';
import { jsonl, mapPresetFiles, prop } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { SESSION_PLACEHOLDER } from '../mapper.js';

const dir = tempDir('cas-openai-responses-');
afterAll(() => dir.cleanup());

const R = 1_741_255_200; // 2025-03-06T10:00:00Z
const usage = (input: number, cached: number, output: number, reasoning: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
});
const say = (text: string) => [
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] },
];
const line = (
  id: string,
  at: number,
  previous: string | undefined,
  input: unknown,
  output: unknown[],
  u: unknown,
) => ({
  request: { model: 'o4-mini', input, ...(previous ? { previous_response_id: previous } : {}) },
  response: {
    id,
    object: 'response',
    created_at: at,
    model: 'o4-mini-2025-04-16',
    user: 'eve',
    output,
    usage: u,
  },
});

describe('openai-responses preset', () => {
  it('chains previous_response_id into one session whatever the line order; tool calls get their results', async () => {
    const lines = [
      line(
        'resp_3',
        R + 40,
        'resp_2',
        [{ role: 'user', content: 'Thanks!' }],
        say('Enjoy!'),
        usage(1800, 1536, 10, 0),
      ),
      line(
        'resp_1',
        R,
        undefined,
        'Pack for Lisbon?',
        [{ type: 'function_call', call_id: 'w1', name: 'weather', arguments: '{"city":"Lisbon"}' }],
        usage(300, 0, 150, 128),
      ),
      line(
        'resp_2',
        R + 3,
        'resp_1',
        [{ type: 'function_call_output', call_id: 'w1', output: 'sunny' }],
        say('Pack light.'),
        usage(1500, 1280, 200, 64),
      ),
      line('other_1', R + 7, undefined, 'Hi', say('Hello'), usage(5, 0, 1, 0)),
    ];
    const { events, rejections } = await mapPresetFiles(dir.path, 'openai-responses', {
      'a.jsonl': jsonl(lines.slice(0, 2)),
      'b.jsonl': jsonl(lines.slice(2)),
    });
    expect(rejections).toEqual([]);
    const id = expect.stringMatching(/^imp2-src-/);
    const chain = {
      type: 'track',
      session_id: 'resp_1',
      conversation_id: 'resp_1',
      user_id: 'eve',
      event_id: id,
    };
    const model = 'o4-mini-2025-04-16';
    expect(events).toEqual([
      {
        ...chain,
        event: 'Conversation Turn',
        timestamp: '2025-03-06T10:00:40.000Z',
        properties: {
          assistant: 'Enjoy!',
          assistant_id: 'resp_3',
          cached_prompt_tokens: 1536,
          completion_tokens: 10,
          model,
          prompt_tokens: 1800,
          user: 'Thanks!',
        },
      },
      {
        ...chain,
        event: 'Conversation Function',
        timestamp: '2025-03-06T10:00:00.000Z',
        properties: { args: '{"city":"Lisbon"}', call_id: 'w1', name: 'weather', result: 'sunny' },
      },
      {
        ...chain,
        event: 'Conversation Usage',
        timestamp: '2025-03-06T10:00:00.000Z',
        properties: { completion_tokens: 150, model, prompt_tokens: 300, reasoning_tokens: 128 },
      },
      {
        ...chain,
        event: 'Conversation Turn',
        timestamp: '2025-03-06T10:00:03.000Z',
        properties: {
          assistant: 'Pack light.',
          assistant_id: 'resp_2',
          cached_prompt_tokens: 1280,
          completion_tokens: 200,
          model,
          prompt_tokens: 1500,
          reasoning_tokens: 64,
          user: 'Pack for Lisbon?',
        },
      },
      {
        // In no chain: placed in eve's sessions by the gap when they are made.
        type: 'track',
        session_id: SESSION_PLACEHOLDER,
        event_id: id,
        user_id: 'eve',
        event: 'Conversation Turn',
        timestamp: '2025-03-06T10:00:07.000Z',
        properties: {
          assistant: 'Hello',
          assistant_id: 'other_1',
          completion_tokens: 1,
          model,
          prompt_tokens: 5,
          user: 'Hi',
        },
      },
    ]);
  });

  it("gives a call's events ids from its response id, so runs that root its chain elsewhere store it once", async () => {
    // A chain cut between two days' logs: day 2 does not know resp_1, so it names the session resp_2.
    const day1 = [
      line(
        'resp_1',
        R,
        undefined,
        'Pack for Lisbon?',
        [{ type: 'function_call', call_id: 'w1', name: 'weather', arguments: '{"city":"Lisbon"}' }],
        usage(300, 0, 150, 128),
      ),
      line(
        'resp_2',
        R + 3,
        'resp_1',
        [{ type: 'function_call_output', call_id: 'w1', output: 'sunny' }],
        say('Pack light.'),
        usage(1500, 1280, 200, 64),
      ),
    ];
    const day2 = [
      line(
        'resp_3',
        R + 40,
        'resp_2',
        'And shoes?',
        [
          { type: 'function_call', call_id: 's1', name: 'shops', arguments: '{}' },
          { type: 'function_call', call_id: 's2', name: 'shops', arguments: '{}' },
        ],
        usage(10, 0, 5, 0),
      ),
    ];
    const apart = [
      ...(await mapPresetFiles(dir.path, 'openai-responses', { 'day1.jsonl': jsonl(day1) })).events,
      ...(await mapPresetFiles(dir.path, 'openai-responses', { 'day2.jsonl': jsonl(day2) })).events,
    ];
    const together = (
      await mapPresetFiles(dir.path, 'openai-responses', { 'all.jsonl': jsonl([...day1, ...day2]) })
    ).events;
    expect(apart.map((e) => e.session_id)).toEqual([
      'resp_1',
      'resp_1',
      'resp_1',
      'resp_2',
      'resp_2',
      'resp_2',
    ]);
    expect(together.map((e) => e.session_id)).toEqual(Array(6).fill('resp_1'));
    const idsApart = apart.map((e) => e.event_id);
    // Each record of a call (its turn, usage, each function call) has its own id, the same in both.
    expect(idsApart.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(idsApart).size).toBe(6);
    expect(together.map((e) => e.event_id)).toEqual(idsApart);
  });

  it('never makes two tool-only calls equal usage records, and --set still names their user', async () => {
    const ask = (id: string, previous: string | undefined) => ({
      request: {
        model: 'o4-mini',
        input: 'Look it up',
        ...(previous ? { previous_response_id: previous } : {}),
      },
      response: {
        id,
        object: 'response',
        created_at: R,
        model: 'o4-mini',
        output: [{ type: 'function_call', call_id: `c-${id}`, name: 'search', arguments: '{}' }],
        usage: usage(100, 0, 10, 0),
      },
    });
    const { events, rejections } = await mapPresetFiles(
      dir.path,
      'openai-responses',
      { 'tools.jsonl': jsonl([ask('resp_x', undefined), ask('resp_y', 'resp_x')]) },
      ['user_id=me'],
    );
    expect(rejections).toEqual([]);
    const usages = events.filter((e) => e.event === 'Conversation Usage');
    expect(usages).toHaveLength(2);
    expect(usages.map((e) => e.user_id)).toEqual(['me', 'me']);
    expect(usages[0]?.event_id).toEqual(expect.any(String));
    expect(usages[0]?.event_id).not.toBe(usages[1]?.event_id);
  });

  it("groups calls in no chain into their user's sessions by the gap; chains keep theirs", async () => {
    const history = [{ role: 'user', content: 'hi' }];
    const calls = [
      line('resp_a1', R, undefined, history, say('hello'), usage(10, 0, 5, 0)),
      line(
        'resp_a2',
        R + 10,
        undefined,
        [...history, { role: 'user', content: 'how are you?' }],
        say('fine'),
        usage(20, 0, 5, 0),
      ),
      // A chain beside them keeps its session, named by its first response.
      line('resp_c1', R + 20, undefined, 'start', say('one'), usage(10, 0, 5, 0)),
      line('resp_c2', R + 30, 'resp_c1', 'more', say('two'), usage(10, 0, 5, 0)),
    ];
    const { events } = await mapPresetFiles(dir.path, 'openai-responses', { 'calls.jsonl': jsonl(calls) });
    expect(events.map((e) => [e.session_id, e.conversation_id])).toEqual([
      [SESSION_PLACEHOLDER, undefined],
      [SESSION_PLACEHOLDER, undefined],
      ['resp_c1', 'resp_c1'],
      ['resp_c1', 'resp_c1'],
    ]);
  });

  it("takes the request's metadata where the logged response's is empty, key by key", async () => {
    // The API copies the request's metadata into the response; a log whose response held {} lost
    // the session the request named (found by probing).
    const call = (id: string, request: Record<string, unknown>, response: Record<string, unknown>) => {
      const base = line(id, R, undefined, 'Hi', say('Hello'), usage(10, 0, 5, 0));
      return { request: { ...base.request, ...request }, response: { ...base.response, ...response } };
    };
    const { events } = await mapPresetFiles(dir.path, 'openai-responses', {
      'm.jsonl': jsonl([
        call('resp_m1', { metadata: { session_id: 's-erin' } }, { metadata: {} }),
        call('resp_m2', { metadata: { session_id: 's-old' } }, { metadata: { session_id: 's-new' } }),
      ]),
    });
    const turns = events.filter((e) => e.event === 'Conversation Turn');
    expect(turns.map((e) => e.session_id)).toEqual(['s-erin', 's-new']);
  });

  it("gives a turn its question from the chain's tool-only calls, with the words sent along with their results", async () => {
    const call = { type: 'function_call', call_id: 'w9', name: 'weather', arguments: '{}' };
    const result = { type: 'function_call_output', call_id: 'w9', output: 'rain' };
    const u = usage(10, 0, 5, 0);
    const { events } = await mapPresetFiles(dir.path, 'openai-responses', {
      'q.jsonl': jsonl([
        line('resp_q0', R, undefined, 'Hello', say('Hi!'), u),
        line('resp_q1', R + 1, 'resp_q0', 'Rain in Oslo?', [call], u),
        line(
          'resp_q2',
          R + 2,
          'resp_q1',
          [result, { role: 'user', content: 'And Bergen?' }],
          say('Both.'),
          u,
        ),
        line('resp_q3', R + 3, 'resp_q2', 'Thanks', [call], u),
        line('resp_q4', R + 4, 'resp_q3', [result], say('Welcome.'), u),
        // Stateless: the history again in `input`, the tool call's preamble text an item of its own.
        line(
          'resp_s1',
          R + 9,
          undefined,
          [
            { role: 'user', content: 'Rain in Oslo?' },
            ...say('Checking.'),
            call,
            result,
            { role: 'user', content: 'And Bergen?' },
          ],
          say('Both.'),
          u,
        ),
      ]),
    });
    const turns = events.filter((e) => e.event === 'Conversation Turn');
    expect(turns.map((e) => [prop(e, 'assistant_id'), prop(e, 'user')])).toEqual([
      ['resp_q0', 'Hello'],
      // The first call asked for the tool only (a usage record): its question was lost (probe).
      ['resp_q2', 'Rain in Oslo?\n\nAnd Bergen?'],
      // Never past the turn before: resp_q2 replied.
      ['resp_q4', 'Thanks'],
      ['resp_s1', 'Rain in Oslo?\n\nAnd Bergen?'],
    ]);
  });

  it('refuses a line without a response', async () => {
    const { rejections } = await mapPresetFiles(dir.path, 'openai-responses', {
      'x.jsonl': '{"request": {}}\n',
    });
    expect(rejections).toEqual([{ where: 'x.jsonl:1', reason: 'no response in this line' }]);
  });
});
