import { afterAll, describe, expect, it } from 'vitest';
import { mapPresetFiles } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';

const dir = tempDir('cas-claude-');
afterAll(() => dir.cleanup());

const text = (t: string) => ({ type: 'text', text: t });
const message = (uuid: string, sender: string, created_at: string, content: unknown[]) => ({
  uuid,
  sender,
  created_at,
  text: '',
  content,
});
const account = { uuid: 'acct-1' };
/** A message without created_at. */
const untimed = (uuid: string, sender: string, t: string) => ({
  ...message(uuid, sender, '', [text(t)]),
  created_at: null,
});
const conversations = [
  {
    uuid: 'c-1',
    name: 'Two turns',
    account,
    chat_messages: [
      message('m1', 'human', '2025-03-05T09:00:01Z', [text('Hi')]),
      message('m2', 'assistant', '2025-03-05T09:00:04.500Z', [text('Hello!')]),
      message('m3', 'human', '2025-03-05T09:01:00Z', [text('Bye')]),
      message('m4', 'assistant', '2025-03-05T09:01:02Z', [text('Good'), text('bye.')]),
    ],
  },
  {
    uuid: 'c-2',
    account,
    chat_messages: [
      message('m5', 'human', '2025-03-05T14:00:02Z', [text('Search it')]),
      message('m6', 'assistant', '2025-03-05T14:00:09Z', [
        {
          type: 'tool_use',
          id: 'tu1',
          name: 'web_search',
          input: { q: 'x' },
          start_timestamp: '2025-03-05T14:00:03Z',
        },
        {
          type: 'tool_result',
          tool_use_id: 'tu1',
          name: 'web_search',
          content: [text('no results')],
          is_error: true,
          stop_timestamp: '2025-03-05T14:00:04.250Z',
        },
        text('Nothing found.'),
      ]),
    ],
  },
];

describe('claude preset', () => {
  it('maps each conversation to a session of turns and tool calls, the account as the user', async () => {
    const { events, rejections } = await mapPresetFiles(dir.path, 'claude', {
      'conversations.json': JSON.stringify(conversations),
    });
    expect(rejections).toEqual([]);
    const common = (id: string) => ({
      type: 'track',
      session_id: id,
      conversation_id: id,
      user_id: 'acct-1',
    });
    expect(events).toEqual([
      {
        ...common('c-1'),
        event: 'Conversation Turn',
        timestamp: '2025-03-05T09:00:04.500Z',
        properties: { assistant: 'Hello!', assistant_id: 'm2', user: 'Hi' },
      },
      {
        ...common('c-1'),
        event: 'Conversation Turn',
        timestamp: '2025-03-05T09:01:02.000Z',
        properties: { assistant: 'Good\nbye.', assistant_id: 'm4', user: 'Bye' },
      },
      {
        ...common('c-2'),
        event: 'Conversation Function',
        timestamp: '2025-03-05T14:00:03.000Z',
        properties: {
          args: '{"q":"x"}',
          call_id: 'tu1',
          name: 'web_search',
          result: 'no results',
          runtime: 1250,
          success: false,
        },
      },
      {
        ...common('c-2'),
        event: 'Conversation Turn',
        timestamp: '2025-03-05T14:00:09.000Z',
        properties: { assistant: 'Nothing found.', assistant_id: 'm6', user: 'Search it' },
      },
    ]);
  });

  it('dates an untimed message by the message before it, else by the conversation', async () => {
    const partly = {
      uuid: 'c-3',
      created_at: '2025-03-05T08:00:00Z',
      account,
      chat_messages: [
        message('p1', 'human', '2025-03-05T09:00:01Z', [text('q1')]),
        message('p2', 'assistant', '2025-03-05T09:00:02Z', [text('a1')]),
        untimed('p3', 'human', 'q2'),
        untimed('p4', 'assistant', 'a2'),
      ],
    };
    const none = {
      uuid: 'c-4',
      created_at: '2025-03-05T08:00:00Z',
      account,
      chat_messages: [untimed('n1', 'human', 'q'), untimed('n2', 'assistant', 'a')],
    };
    const { events } = await mapPresetFiles(dir.path, 'claude', { 'u.json': JSON.stringify([partly, none]) });
    // Never before the messages that precede it (the conversation's start was: 08:00, before q1).
    expect(events.map((e) => [(e.properties as { user?: string }).user, e.timestamp])).toEqual([
      ['q1', '2025-03-05T09:00:02.000Z'],
      ['q2', '2025-03-05T09:00:02.000Z'],
      ['q', '2025-03-05T08:00:00.000Z'],
    ]);
  });

  it('dates messages before any time by the next one that has one, and refuses a conversation with no time at all', async () => {
    // Stamped on arrival instead, they sat after the messages that follow them (found by probing).
    const late = {
      uuid: 'c-5',
      created_at: null,
      account,
      chat_messages: [
        untimed('l1', 'human', 'q1'),
        untimed('l2', 'assistant', 'a1'),
        message('l3', 'human', '2025-03-05T10:00:00Z', [text('q2')]),
        message('l4', 'assistant', '2025-03-05T10:00:05Z', [text('a2')]),
      ],
    };
    const none = {
      uuid: 'c-6',
      created_at: null,
      account,
      chat_messages: [untimed('z1', 'human', 'q'), untimed('z2', 'assistant', 'a')],
    };
    const { events, rejections } = await mapPresetFiles(dir.path, 'claude', {
      'late.json': JSON.stringify([late, none]),
    });
    expect(events.map((e) => [(e.properties as { user?: string }).user, e.timestamp])).toEqual([
      ['q1', '2025-03-05T10:00:05.000Z'],
      ['q2', '2025-03-05T10:00:05.000Z'],
    ]);
    expect(rejections.map((r) => r.reason)).toEqual([
      expect.stringMatching(/^\[1\]\.chat_messages\[1\]: no time: neither this message nor any other/),
    ]);
  });

  // The later export holding the reply stored it again as another turn (found by probing).
  it('stores a last question without a reply yet as no turn; one in the middle stays a turn', async () => {
    const pending = {
      uuid: 'c-7',
      account,
      chat_messages: [
        message('p1', 'human', '2025-03-05T09:00:00Z', [text('Hi')]),
        message('p2', 'human', '2025-03-05T09:00:10Z', [text('Hello?')]),
        message('p3', 'assistant', '2025-03-05T09:00:12Z', [text('Hello!')]),
        message('p4', 'human', '2025-03-05T09:01:00Z', [text('A joke?')]),
      ],
    };
    const { events } = await mapPresetFiles(dir.path, 'claude', { 'p.json': JSON.stringify([pending]) });
    expect(
      events.map((e) => [
        (e.properties as { user?: string }).user,
        (e.properties as { assistant?: string }).assistant,
      ]),
    ).toEqual([
      ['Hi', ''],
      ['Hello?', 'Hello!'],
    ]);
  });

  it('reads a time without a zone in --tz (Date.parse read it in the machine zone)', async () => {
    const naive = {
      uuid: 'c-5',
      account,
      chat_messages: [
        message('z1', 'human', '2025-03-05 09:00:00', [text('q')]),
        message('z2', 'assistant', '2025-03-05T09:00:03', [text('a')]),
      ],
    };
    const files = { 'z.json': JSON.stringify([naive]) };
    const { events } = await mapPresetFiles(dir.path, 'claude', files, [], 'Asia/Kolkata');
    expect(events.map((e) => e.timestamp)).toEqual(['2025-03-05T03:30:03.000Z']);
  });

  it('refuses what is not a Claude conversation, naming its place', async () => {
    const { rejections } = await mapPresetFiles(dir.path, 'claude', { 'x.json': '[\n{"uuid": "c"}\n]' });
    expect(rejections).toEqual([
      { where: 'x.json:2', reason: '[0]: not a Claude conversation: needs "uuid" and "chat_messages"' },
    ]);
  });
});
