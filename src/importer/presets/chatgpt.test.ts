import { afterAll, describe, expect, it } from 'vitest';
import { mapPresetFiles } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { activeBranch } from './chatgpt.js';

const dir = tempDir('cas-chatgpt-');
afterAll(() => dir.cleanup());

const T = 1_741_082_400; // 2025-03-04T10:00:00Z
const text = (s: string) => ({ content_type: 'text', parts: [s] });
function msg(
  id: string,
  role: string,
  t: number | null,
  content: unknown,
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    author: { role, name: extra.name ?? null },
    create_time: t,
    content,
    recipient: 'all',
    metadata: {},
    ...extra,
  };
}
const node = (id: string, parent: string | null, children: string[], message: unknown = null) => ({
  id,
  message,
  parent,
  children,
});

/** Two branches after the first answer (an edited question): only the one ending at current_node counts. */
const branched = {
  id: 'conv-a',
  title: 'Capitals',
  current_node: 'a2b',
  mapping: {
    root: node('root', null, ['sys']),
    sys: node(
      'sys',
      'root',
      ['u1'],
      msg('sys', 'system', null, text(''), { metadata: { is_visually_hidden_from_conversation: true } }),
    ),
    u1: node('u1', 'sys', ['a1'], msg('u1', 'user', T + 1.25, text('Capital of France?'))),
    a1: node(
      'a1',
      'u1',
      ['u2a', 'u2b'],
      msg('a1', 'assistant', T + 3.5, text('Paris.'), { metadata: { model_slug: 'gpt-4o' } }),
    ),
    u2a: node('u2a', 'a1', ['a2a'], msg('u2a', 'user', T + 60, text('And Italy?'))),
    a2a: node(
      'a2a',
      'u2a',
      [],
      msg('a2a', 'assistant', T + 62, text('Rome.'), { metadata: { model_slug: 'gpt-4o' } }),
    ),
    u2b: node('u2b', 'a1', ['a2b'], msg('u2b', 'user', T + 120.5, text('And Spain?'))),
    a2b: node(
      'a2b',
      'u2b',
      [],
      msg('a2b', 'assistant', T + 122.75, text('Madrid.'), { metadata: { model_slug: 'gpt-4o-mini' } }),
    ),
  },
};

/** A code-interpreter call and its output, then the answer in two messages. */
const tools = {
  conversation_id: 'conv-b',
  current_node: 'f2',
  default_model_slug: 'gpt-4o',
  mapping: {
    r: node('r', null, ['q']),
    q: node('q', 'r', ['c'], msg('q', 'user', T + 1000, text('2**10?'))),
    c: node(
      'c',
      'q',
      ['o'],
      msg(
        'c',
        'assistant',
        T + 1001,
        { content_type: 'code', text: 'print(2**10)' },
        { recipient: 'python' },
      ),
    ),
    o: node(
      'o',
      'c',
      ['f1'],
      msg('o', 'tool', T + 1001.5, { content_type: 'execution_output', text: '1024' }, { name: 'python' }),
    ),
    f1: node('f1', 'o', ['f2'], msg('f1', 'assistant', T + 1002, text('It is'))),
    f2: node('f2', 'f1', [], msg('f2', 'assistant', T + 1003, text('1024.'))),
  },
};

const iso = (s: number) => new Date(s * 1000).toISOString();

describe('chatgpt preset', () => {
  it('refuses a turn over the per-event size limit as the service would, so a dry run says so too', async () => {
    const huge = {
      id: 'conv-h',
      current_node: 'a',
      mapping: {
        u: node('u', null, ['a'], msg('u', 'user', T + 1, text(`summarize: ${'x'.repeat(1_200_000)}`))),
        a: node('a', 'u', [], msg('a', 'assistant', T + 2, text('ok'))),
      },
    };
    const { events, rejections } = await mapPresetFiles(
      dir.path,
      'chatgpt',
      { 'h.json': JSON.stringify([huge]) },
      ['user_id=me'],
    );
    expect(events).toEqual([]);
    expect(rejections.map((r) => r.reason)).toEqual([
      expect.stringMatching(/event is 1200\d{3} bytes; at most 1048576 allowed$/),
    ]);
  });

  it('folds several answers of one tool call into its result (browsing quotes a message per page)', async () => {
    const browse = {
      id: 'conv-w',
      current_node: 'a',
      mapping: {
        u: node('u', null, ['c'], msg('u', 'user', T + 1, text('news?'))),
        c: node(
          'c',
          'u',
          ['r1'],
          msg(
            'c',
            'assistant',
            T + 2,
            { content_type: 'code', text: 'mclick([0, 1])' },
            { recipient: 'browser' },
          ),
        ),
        r1: node(
          'r1',
          'c',
          ['r2'],
          msg('r1', 'tool', T + 4, { content_type: 'tether_quote', text: 'quote A' }, { name: 'browser' }),
        ),
        r2: node(
          'r2',
          'r1',
          ['a'],
          msg('r2', 'tool', T + 4.5, { content_type: 'tether_quote', text: 'quote B' }, { name: 'browser' }),
        ),
        a: node('a', 'r2', [], msg('a', 'assistant', T + 6, text("Here's the news."))),
      },
    };
    const { events } = await mapPresetFiles(dir.path, 'chatgpt', { 'w.json': JSON.stringify([browse]) }, [
      'user_id=me',
    ]);
    const calls = events.filter((e) => e.event === 'Conversation Function');
    expect(calls.map((e) => e.properties)).toEqual([
      { name: 'browser', args: 'mclick([0, 1])', result: 'quote A\n\nquote B', runtime: 2500, call_id: 'c' },
    ]);
  });

  it('reads voice messages by their transcripts (audio parts left out)', async () => {
    const voice = (direction: string, said: string) => ({
      content_type: 'multimodal_text',
      parts: [
        { content_type: 'audio_transcription', direction, decoding_id: null, text: said },
        { content_type: 'audio_asset_pointer', asset_pointer: 'sediment://file_1', format: 'wav' },
      ],
    });
    const spoken = {
      id: 'conv-v',
      current_node: 'a',
      mapping: {
        u: node('u', null, ['a'], msg('u', 'user', T + 1, voice('in', "What's the weather on Mars?"))),
        a: node(
          'a',
          'u',
          [],
          msg('a', 'assistant', T + 3, voice('out', 'Cold and dusty.'), {
            metadata: { model_slug: 'gpt-4o' },
          }),
        ),
      },
    };
    const { events } = await mapPresetFiles(dir.path, 'chatgpt', { 'v.json': JSON.stringify([spoken]) }, [
      'user_id=me',
    ]);
    expect(events).toEqual([
      expect.objectContaining({
        timestamp: iso(T + 3),
        properties: expect.objectContaining({
          user: "What's the weather on Mars?",
          assistant: 'Cold and dusty.',
          model: 'gpt-4o',
        }),
      }),
    ]);
  });

  it('walks the active branch of each conversation: turns and function calls at their own times', async () => {
    const file = JSON.stringify([branched, tools], null, 1);
    const { events, rejections } = await mapPresetFiles(dir.path, 'chatgpt', { 'conversations.json': file }, [
      'user_id=me',
    ]);
    expect(rejections).toEqual([]);
    const common = (id: string) => ({ type: 'track', session_id: id, conversation_id: id, user_id: 'me' });
    expect(events).toEqual([
      {
        ...common('conv-a'),
        event: 'Conversation Turn',
        timestamp: iso(T + 3.5),
        properties: { assistant: 'Paris.', assistant_id: 'a1', model: 'gpt-4o', user: 'Capital of France?' },
      },
      {
        ...common('conv-a'),
        event: 'Conversation Turn',
        timestamp: iso(T + 122.75),
        properties: { assistant: 'Madrid.', assistant_id: 'a2b', model: 'gpt-4o-mini', user: 'And Spain?' },
      },
      {
        ...common('conv-b'),
        event: 'Conversation Function',
        timestamp: iso(T + 1001),
        properties: { args: 'print(2**10)', call_id: 'c', name: 'python', result: '1024', runtime: 500 },
      },
      {
        ...common('conv-b'),
        event: 'Conversation Turn',
        timestamp: iso(T + 1003),
        properties: { assistant: 'It is\n\n1024.', assistant_id: 'f2', model: 'gpt-4o', user: '2**10?' },
      },
    ]);
  });

  it('names each bad conversation by file:line and [index], and reads the others', async () => {
    const file = `[\n${JSON.stringify(branched)},\n{"id": "broken", "mapping": {,}},\n${JSON.stringify(tools)}\n]\n`;
    const noUser = await mapPresetFiles(dir.path, 'chatgpt', { 'bad.json': file });
    expect(noUser.rejections[0]).toEqual({
      where: 'bad.json:2',
      reason:
        '[0].mapping.a1.message: no user id in this ChatGPT export record; give one with --set user_id=<id>',
    });
    const withUser = await mapPresetFiles(dir.path, 'chatgpt', { 'bad.json': file }, ['user_id=me']);
    expect(withUser.rejections).toEqual([
      { where: 'bad.json:3', reason: expect.stringMatching(/^\[1\]: not valid JSON/) },
    ]);
    expect(withUser.events.map((e) => e.session_id)).toEqual(['conv-a', 'conv-a', 'conv-b', 'conv-b']);
  });

  it('refuses a conversation whose current_node is missing or names no node, instead of dropping it', async () => {
    const linear = (id: string, current: Record<string, unknown>) => ({
      id,
      create_time: T,
      ...current,
      mapping: {
        r: node('r', null, ['u']),
        u: node('u', 'r', ['a'], msg('u', 'user', T + 1, text('Hi'))),
        a: node('a', 'u', [], msg('a', 'assistant', T + 2, text('Hello'))),
      },
    });
    const empty = { id: 'conv-empty', mapping: { r: node('r', null, []) } };
    const file = `[\n${[
      linear('conv-none', {}),
      linear('conv-null', { current_node: null }),
      linear('conv-gone', { current_node: 'zzz' }),
      linear('conv-ok', { current_node: 'a' }),
      empty,
    ]
      .map((c) => JSON.stringify(c))
      .join(',\n')}\n]\n`;
    const { events, rejections } = await mapPresetFiles(dir.path, 'chatgpt', { 'cur.json': file }, [
      'user_id=me',
    ]);
    expect(rejections).toEqual([
      { where: 'cur.json:2', reason: '[0].current_node: missing, so the active branch is unknown' },
      { where: 'cur.json:3', reason: '[1].current_node: missing, so the active branch is unknown' },
      {
        where: 'cur.json:4',
        reason: '[2].current_node: "zzz" is not a node of mapping, so the active branch is unknown',
      },
    ]);
    // A conversation without a message has nothing to lose: no record, no rejection.
    expect(events.map((e) => e.session_id)).toEqual(['conv-ok']);
  });

  it('dates a message without create_time by its conversation, never by the import', async () => {
    const untimed = {
      id: 'conv-c',
      create_time: T,
      current_node: 'a',
      mapping: {
        u: node('u', null, ['a'], msg('u', 'user', null, text('Hi'))),
        a: node('a', 'u', [], msg('a', 'assistant', null, text('Hello'))),
      },
    };
    const { events } = await mapPresetFiles(dir.path, 'chatgpt', { 'c.json': JSON.stringify([untimed]) }, [
      'user_id=me',
    ]);
    expect(events.map((e) => e.timestamp)).toEqual([iso(T)]);
  });

  it('dates messages before any time by the next one that has one, and refuses a conversation with no time at all', async () => {
    // Stamped on arrival, the first turn sat 683 days after the second (found by probing).
    const lateTimes = {
      id: 'conv-late',
      create_time: null,
      current_node: 'a2',
      mapping: {
        u1: node('u1', null, ['a1'], msg('u1', 'user', null, text('first q'))),
        a1: node('a1', 'u1', ['u2'], msg('a1', 'assistant', null, text('first a'))),
        u2: node('u2', 'a1', ['a2'], msg('u2', 'user', T + 20, text('second q'))),
        a2: node('a2', 'u2', [], msg('a2', 'assistant', T + 25, text('second a'))),
      },
    };
    const timeless = {
      id: 'conv-none',
      create_time: null,
      current_node: 'a',
      mapping: {
        u: node('u', null, ['a'], msg('u', 'user', null, text('q'))),
        a: node('a', 'u', [], msg('a', 'assistant', null, text('a'))),
      },
    };
    const { events, rejections } = await mapPresetFiles(
      dir.path,
      'chatgpt',
      { 'late.json': JSON.stringify([lateTimes, timeless]) },
      ['user_id=me'],
    );
    expect(events.map((e) => [(e.properties as { user?: string }).user, e.timestamp])).toEqual([
      ['first q', iso(T + 25)],
      ['second q', iso(T + 25)],
    ]);
    expect(rejections).toEqual([
      {
        where: 'late.json:1',
        reason: expect.stringMatching(
          /^\[1\]\.mapping\.a\.message: no time: neither this message nor any other/,
        ),
      },
    ]);
  });

  it('refuses a conversation whose create_time is given but no epoch time, where it took the time before', async () => {
    const withTime = (id: string, conversationTime: unknown, replyTime: unknown) => ({
      id,
      create_time: conversationTime,
      current_node: 'a',
      mapping: {
        u: node('u', null, ['a'], msg('u', 'user', T, text('q'))),
        a: node('a', 'u', [], { ...msg('a', 'assistant', null, text('a')), create_time: replyTime }),
      },
    });
    const file = [
      withTime('conv-text', T, String(T + 5)),
      withTime('conv-zero', T, 0),
      withTime('conv-iso', '2025-03-04T10:00:00Z', T + 5),
      withTime('conv-ok', T, T + 5),
      // A hidden message's odd time goes unused, as it did: its conversation is stored.
      {
        ...withTime('conv-hidden', T, T + 5),
        current_node: 'a',
        mapping: {
          h: node('h', null, ['u'], {
            ...msg('h', 'system', null, text(''), {
              metadata: { is_visually_hidden_from_conversation: true },
            }),
            create_time: 0,
          }),
          u: node('u', 'h', ['a'], msg('u', 'user', T, text('q'))),
          a: node('a', 'u', [], msg('a', 'assistant', T + 5, text('a'))),
        },
      },
    ];
    const { events, rejections } = await mapPresetFiles(
      dir.path,
      'chatgpt',
      { 't.json': JSON.stringify(file) },
      ['user_id=me'],
    );
    expect(rejections.map((r) => r.reason)).toEqual([
      `[0].mapping.a.message.create_time: "${T + 5}" is not a time in epoch seconds`,
      '[1].mapping.a.message.create_time: 0 is not a time in epoch seconds',
      '[2].create_time: "2025-03-04T10:00:00Z" is not a time in epoch seconds',
    ]);
    expect(events.map((e) => [e.session_id, e.timestamp])).toEqual([
      ['conv-ok', iso(T + 5)],
      ['conv-hidden', iso(T + 5)],
    ]);
  });

  // The later export holding the reply stored it again as another turn (found by probing).
  it('stores a last question without a reply yet as no turn; a question answered later, once', async () => {
    const pending = (current: string, extra: Record<string, unknown> = {}) => ({
      id: 'conv-pending',
      create_time: T,
      current_node: current,
      mapping: {
        u1: node('u1', null, ['a1'], msg('u1', 'user', T + 1, text('Hi'))),
        a1: node('a1', 'u1', ['u2'], msg('a1', 'assistant', T + 2, text('Hello'))),
        u2: node('u2', 'a1', current === 'a2' ? ['a2'] : [], msg('u2', 'user', T + 3, text('A joke?'))),
        ...extra,
      },
    });
    const first = await mapPresetFiles(dir.path, 'chatgpt', { 'p1.json': JSON.stringify([pending('u2')]) }, [
      'user_id=me',
    ]);
    expect(first.events.map((e) => (e.properties as { user?: string }).user)).toEqual(['Hi']);
    const later = pending('a2', {
      a2: node('a2', 'u2', [], msg('a2', 'assistant', T + 4, text('Knock knock'))),
    });
    const second = await mapPresetFiles(dir.path, 'chatgpt', { 'p2.json': JSON.stringify([later]) }, [
      'user_id=me',
    ]);
    expect(
      second.events.map((e) => (e.properties as { user?: string; assistant?: string }).assistant),
    ).toEqual(['Hello', 'Knock knock']);
  });

  it('gives a call whose tool answer has no time of its own no runtime (the inherited time made it 0)', async () => {
    const untimedAnswer = {
      ...tools,
      conversation_id: 'conv-t',
      mapping: {
        ...tools.mapping,
        o: node(
          'o',
          'c',
          ['f1'],
          msg('o', 'tool', null, { content_type: 'execution_output', text: '1024' }, { name: 'python' }),
        ),
      },
    };
    const { events } = await mapPresetFiles(
      dir.path,
      'chatgpt',
      { 't.json': JSON.stringify([untimedAnswer]) },
      ['user_id=me'],
    );
    const call = events.find((e) => e.event === 'Conversation Function');
    expect(call?.properties).toEqual({ args: 'print(2**10)', call_id: 'c', name: 'python', result: '1024' });
  });

  it('dates an untimed message by the message before it in the branch, never before it', async () => {
    const partly = {
      id: 'conv-d',
      create_time: T,
      current_node: 'a2',
      mapping: {
        s: node('s', null, ['u1'], msg('s', 'system', T + 5, text(''))),
        u1: node('u1', 's', ['a1'], msg('u1', 'user', T + 10, text('q1'))),
        a1: node('a1', 'u1', ['u2'], msg('a1', 'assistant', T + 11, text('a1'))),
        u2: node('u2', 'a1', ['c'], msg('u2', 'user', null, text('q2'))),
        c: node('c', 'u2', ['a2'], msg('c', 'assistant', null, text('1+1'), { recipient: 'python' })),
        a2: node('a2', 'c', [], msg('a2', 'assistant', null, text('a2'))),
      },
    };
    const { events } = await mapPresetFiles(dir.path, 'chatgpt', { 'd.json': JSON.stringify([partly]) }, [
      'user_id=me',
    ]);
    expect(events.map((e) => [e.event, e.timestamp])).toEqual([
      ['Conversation Turn', iso(T + 11)],
      ['Conversation Function', iso(T + 11)],
      ['Conversation Turn', iso(T + 11)],
    ]);
  });

  it('stops walking at a cycle or a missing parent, saying where', () => {
    const mapping = { a: { parent: 'b' }, b: { parent: 'a' } };
    expect(activeBranch(mapping, 'a')).toEqual({
      nodes: [
        { id: 'b', node: { parent: 'a' } },
        { id: 'a', node: { parent: 'b' } },
      ],
      broken: { at: 'mapping.b.parent', reason: '"a" makes a cycle, so the active branch is broken' },
    });
    expect(activeBranch({ x: { parent: 'gone' } }, 'x').broken).toEqual({
      at: 'mapping.x.parent',
      reason: '"gone" is not a node of mapping, so the active branch is broken',
    });
    expect(activeBranch({ r: { parent: null }, x: { parent: 'r' } }, 'x')).toEqual({
      nodes: [
        { id: 'r', node: { parent: null } },
        { id: 'x', node: { parent: 'r' } },
      ],
    });
  });
});
