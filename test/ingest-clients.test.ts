import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymousId } from '../src/service/identity/ids.js';
import { at, byName, jsClient, pythonClient, storedEvents, userById } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

/** The names a full session stores, oldest first: what the client sent plus what the service generated. */
const FULL_SESSION = [
  'Session Started',
  'Conversation Started',
  'Conversation Turn',
  'Conversation Usage',
  'Conversation Function',
  'Feedback Given',
  'User Identified',
  'Conversation Started',
  'Conversation Turn',
  'Conversation Ended',
  'Conversation Summary',
  'Conversation Ended',
  'Conversation Summary',
  'Session Ended',
];

async function checkFullSession(session: string, device: string, user: string): Promise<void> {
  const events = await storedEvents(t, session);
  expect(events.map((e) => e.event)).toEqual(FULL_SESSION);
  // Everything reads as the identified person now, the anonymous part of the session included.
  expect(new Set(events.map((e) => e.user_id))).toEqual(new Set([user]));
  expect(events[0]!.user_traits).toEqual({ plan: 'pro' });

  const first = `${session}/1`;
  const [started] = byName(events, 'Conversation Started');
  const [firstTurn] = byName(events, 'Conversation Turn');
  expect(started).toMatchObject({ conversation_id: first, origin_event_id: firstTurn!.event_id });
  expect(firstTurn!.properties).toMatchObject({ user: 'where is my order?' });

  const summaries = byName(events, 'Conversation Summary');
  const end = events.at(-1)!;
  for (const s of summaries) expect(s.origin_event_id).toBe(end.event_id);
  const summary = summaries.find((s) => s.conversation_id === first)!;
  expect(summary.properties).toMatchObject({
    turns: 1,
    cost: 0.0075,
    cost_known: true,
    prompt_tokens: 1000,
    completion_tokens: 500,
    function_calls: 1,
    function_errors: 0,
    duration_s: 120,
  });
  expect(['positive', 'neutral', 'negative']).toContain(summary.properties?.sentiment);
  const second = summaries.find((s) => s.conversation_id !== first)!;
  expect(second.properties).toMatchObject({ turns: 1, cost: 0.002, function_calls: 0 });

  const record = await userById(t, user);
  expect(record.aliases).toEqual([anonymousId(device), user]);
  expect(record.traits).toEqual({ plan: 'pro' });
  expect(record.created_at).toBe(at(0));
  const byDevice = await t.post('/bc/v1/user/identify', { device_id: device });
  expect(byDevice.json).toMatchObject({ user_id: record.user_id, id: user });
}

describe('a full session, the way the hosted service clients send it', () => {
  it('Python client: one object per queue POST with a Bearer key', async () => {
    const send = pythonClient(t);
    const s = 'py-session';
    const sent = [
      { type: 'start_session', session_id: s, device_id: 'py-device', timestamp: at(0) },
      {
        type: 'track',
        event: 'Conversation Turn',
        session_id: s,
        timestamp: at(10),
        properties: { user: 'where is my order?', assistant: 'Let me check.' },
      },
      {
        type: 'track',
        event: 'Conversation Usage',
        session_id: s,
        timestamp: at(11),
        properties: { model: 'gpt-4o', prompt_tokens: 1000, completion_tokens: 500 },
      },
      {
        type: 'track',
        event: 'Conversation Function',
        session_id: s,
        timestamp: at(12),
        properties: { name: 'lookup_order', args: '{"id":7}', result: '{"status":"shipped"}', runtime: 40 },
      },
      { type: 'track', event: 'Feedback Given', session_id: s, timestamp: at(13), properties: { rating: 5 } },
      { type: 'identify', session_id: s, id: 'py-user', traits: { plan: 'pro' }, timestamp: at(14) },
      {
        type: 'track',
        event: 'Conversation Started',
        session_id: s,
        conversation_id: 'py-second',
        timestamp: at(20),
      },
      {
        type: 'track',
        event: 'Conversation Turn',
        session_id: s,
        conversation_id: 'py-second',
        timestamp: at(30),
        properties: { user: 'thanks, great help', assistant: 'You are welcome!', cost: 0.002 },
      },
      { type: 'end_session', session_id: s, timestamp: at(130) },
    ];
    for (const event of sent) expect(await send(event)).toEqual({ status: 'ok', accepted: 1, duplicates: 0 });
    await checkFullSession(s, 'py-device', 'py-user');
  });

  it('JavaScript client: per-event routes with the bare key, each answering what it stored', async () => {
    const send = jsClient(t);
    const s = 'js-session';
    const started = await send('start-session', {
      session_id: s,
      device_id: 'js-device',
      timestamp: at(0),
      event_id: 'js-1',
    });
    expect(started).toEqual([
      expect.objectContaining({
        type: 'start_session',
        event: 'Session Started',
        session_id: s,
        event_id: 'js-1',
      }),
    ]);
    const firstTurn = await send('conversation-turn', {
      session_id: s,
      timestamp: at(10),
      event_id: 'js-2',
      properties: { user: 'where is my order?', assistant: 'Let me check.' },
    });
    expect(firstTurn.map((e) => [e.event, e.conversation_id])).toEqual([
      ['Conversation Started', `${s}/1`],
      ['Conversation Turn', `${s}/1`],
    ]);
    expect(firstTurn[0]).toMatchObject({ origin_event_id: 'js-2', user_id: anonymousId('js-device') });
    await send('conversation-usage', {
      session_id: s,
      timestamp: at(11),
      properties: { model: 'gpt-4o-2024-08-06', prompt_tokens: 1000, completion_tokens: 500 },
    });
    await send('conversation-function', {
      session_id: s,
      timestamp: at(12),
      properties: { name: 'lookup_order', args: '{"id":7}', runtime: 40 },
    });
    await send('track', {
      session_id: s,
      event: 'Feedback Given',
      timestamp: at(13),
      properties: { rating: 5 },
    });
    const identified = await send('identify', {
      session_id: s,
      user_id: 'js-user',
      traits: { plan: 'pro' },
      timestamp: at(14),
    });
    expect(identified).toEqual([
      expect.objectContaining({ type: 'identify', event: 'User Identified', user_id: 'js-user' }),
    ]);
    await send('start-conversation', { session_id: s, conversation_id: 'js-second', timestamp: at(20) });
    await send('conversation-turn', {
      session_id: s,
      conversation_id: 'js-second',
      timestamp: at(30),
      properties: { user: 'thanks, great help', assistant: 'You are welcome!', cost: 0.002 },
    });
    const ended = await send('end-session', { session_id: s, timestamp: at(130) });
    expect(ended.map((e) => e.event)).toEqual([
      'Conversation Ended',
      'Conversation Summary',
      'Conversation Ended',
      'Conversation Summary',
      'Session Ended',
    ]);
    await checkFullSession(s, 'js-device', 'js-user');
  });
});
