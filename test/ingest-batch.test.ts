import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at, byName, queue, storedEvents, turn, userById } from './helpers/ingest.js';
import { startServiceOn, startTestService, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

async function count(sessionId: string): Promise<number> {
  const ranges = encodeURIComponent(
    JSON.stringify([{ start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z' }]),
  );
  const res = await t.get(`/bc/v1/summary/event-counts?ranges=${ranges}&session_id=${sessionId}`);
  expect(res.status).toBe(200);
  return (res.json as number[])[0]!;
}

describe('idempotency and all-or-nothing batches (decisions §4)', () => {
  const batch = [
    { type: 'start_session', session_id: 'dup-s', user_id: 'dup-user', event_id: 'd1', timestamp: at(0) },
    turn(
      'dup-s',
      at(1),
      { model: 'gpt-4o-mini', prompt_tokens: 10, completion_tokens: 5 },
      { event_id: 'd2' },
    ),
    { type: 'track', event: 'Clicked', session_id: 'dup-s', event_id: 'd3', timestamp: at(2) },
    { type: 'end_session', session_id: 'dup-s', event_id: 'd4', timestamp: at(3) },
  ];

  it('stores a re-posted batch once and reports every event as a duplicate, even for the ended session', async () => {
    expect((await queue(t, batch)).json).toEqual({ status: 'ok', accepted: 4, duplicates: 0 });
    const stored = await count('dup-s');
    expect(stored).toBe(7); // 4 sent + Conversation Started, Conversation Ended, Conversation Summary
    expect((await queue(t, batch)).json).toEqual({ status: 'ok', accepted: 0, duplicates: 4 });
    expect(await count('dup-s')).toBe(stored);
  });

  it("refuses a caller's event_id of the form generated events have, which would pass as their repeat", async () => {
    // Every generated event a session can have: starts, a turn with an intent, ends, the summary.
    const batch = [
      { type: 'start_session', session_id: 'gen-ids', user_id: 'gen-user', event_id: 'g1', timestamp: at(0) },
      turn('gen-ids', at(1), { intent: 'refund' }, { event_id: 'g2' }),
      { type: 'end_session', session_id: 'gen-ids', event_id: 'g3', timestamp: at(2) },
    ];
    expect((await queue(t, batch)).json).toEqual({ status: 'ok', accepted: 3, duplicates: 0 });
    const generated = (await storedEvents(t, 'gen-ids')).filter((e) => e.origin_event_id !== undefined);
    expect(new Set(generated.map((e) => e.event))).toEqual(
      new Set(['Conversation Started', 'Conversation Ended', 'Conversation Summary', 'Intent Informed']),
    );
    for (const { event_id } of generated) {
      const res = await queue(t, [
        {
          type: 'track',
          event: 'Important',
          session_id: 'gen-ids-2',
          user_id: 'gen-user',
          event_id,
          timestamp: at(5),
        },
      ]);
      expect(res.status, event_id).toBe(400);
      expect(res.json).toMatchObject({
        issues: [{ path: '[0].event_id', message: expect.stringMatching(/reserved/) }],
      });
    }
    // A new session's start, and the end the service adds for a session left open.
    const forms = ['x#session-started', 'x#end', 'order#end', 'x#conversation-started:c'];
    for (const event_id of forms) {
      const res = await queue(t, [{ type: 'track', event: 'E', session_id: 's', user_id: 'u', event_id }]);
      expect(res.status, event_id).toBe(400);
    }
    const free = [
      {
        type: 'track',
        event: 'E',
        session_id: 'gen-ids-3',
        user_id: 'gen-user',
        event_id: 'order#42',
        timestamp: at(6),
      },
    ];
    expect((await queue(t, free)).json).toEqual({ status: 'ok', accepted: 1, duplicates: 0 });
  });

  it('treats a repeated event_id inside one batch as a duplicate', async () => {
    const twice = [
      { type: 'start_session', session_id: 'twice', device_id: 'tw-d', event_id: 'tw-1', timestamp: at(0) },
      { type: 'track', event: 'Clicked', session_id: 'twice', event_id: 'tw-2', timestamp: at(1) },
      { type: 'track', event: 'Clicked', session_id: 'twice', event_id: 'tw-2', timestamp: at(1) },
    ];
    expect((await queue(t, twice)).json).toEqual({ status: 'ok', accepted: 2, duplicates: 1 });
    expect(byName(await storedEvents(t, 'twice'), 'Clicked')).toHaveLength(1);
  });

  it('stores nothing from a batch with one invalid element and names [index].field', async () => {
    const res = await queue(t, [
      { type: 'start_session', session_id: 'bad-batch', device_id: 'bb-d', timestamp: at(0) },
      turn('bad-batch', at(1), {}),
      turn('bad-batch', at(2), { user: 7 }),
    ]);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'invalid_input', issues: [{ path: '[2].properties.user' }] });
    expect(await count('bad-batch')).toBe(0);
  });

  it('refuses a turn for an ended session with 409 session_ended, storing nothing of its batch', async () => {
    const res = await queue(t, [
      { type: 'start_session', session_id: 'fresh-one', device_id: 'f1', timestamp: at(0) },
      turn('dup-s', at(10), {}),
    ]);
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ code: 'session_ended', issues: [{ path: '[1].session_id' }] });
    expect(await count('fresh-one')).toBe(0);
    const single = await t.post('/bc/v1/events/event/conversation-turn', turn('dup-s', at(11), {}));
    expect(single.status).toBe(409);
    expect(single.json).toMatchObject({ code: 'session_ended', issues: [{ path: 'session_id' }] });
    // The refused batch left no trace: its new session starts cleanly later.
    expect((await queue(t, [turn('fresh-one', at(20), {}, { device_id: 'f1' })])).status).toBe(200);
    expect(byName(await storedEvents(t, 'fresh-one'), 'Session Started')).toHaveLength(1);
  });

  // Alone it was 409 session_ended "ended at" the refused end itself; in one batch with the session's
  // first event, 200, storing Session Ended an hour before Session Started (found by probing).
  it('refuses an end before its session started with 409 naming its timestamp, alone or batched', async () => {
    const track = (session: string) => ({
      type: 'track',
      event: 'Clicked',
      session_id: session,
      user_id: 'early-end-user',
      timestamp: at(3600),
    });
    const early = (session: string) => ({ type: 'end_session', session_id: session, timestamp: at(0) });
    const message = (session: string) =>
      `session "${session}" started at ${at(3600)}: it cannot end before that, at ${at(0)}`;
    expect((await queue(t, [track('early-alone')])).status).toBe(200);
    const alone = await queue(t, [early('early-alone')]);
    expect(alone.status).toBe(409);
    expect(alone.json).toMatchObject({
      code: 'conflict',
      issues: [{ path: '[0].timestamp', message: message('early-alone') }],
    });
    const batched = await queue(t, [track('early-batched'), early('early-batched')]);
    expect(batched.status).toBe(409);
    expect(batched.json).toMatchObject({
      issues: [{ path: '[1].timestamp', message: message('early-batched') }],
    });
    expect(await count('early-batched')).toBe(0);
    // The session is still open: a later end closes it.
    expect((await queue(t, [{ ...early('early-alone'), timestamp: at(3700) }])).status).toBe(200);
    expect(byName(await storedEvents(t, 'early-alone'), 'Session Ended')).toHaveLength(1);
  });

  // Both were 200, storing Conversation Ended before Conversation Started (found by probing).
  it("refuses an end before its conversation started, the conversation's own or its session's", async () => {
    const talk = (session: string, s: number) =>
      turn(
        session,
        at(s),
        { user: 'a', assistant: 'b' },
        { user_id: 'late-conv-user', conversation_id: 'q' },
      );
    const endConversation = {
      type: 'track',
      event: 'Conversation Ended',
      session_id: 'late-conv',
      conversation_id: 'q',
      timestamp: at(0),
    };
    const own = await queue(t, [talk('late-conv', 300), endConversation]);
    expect(own.status).toBe(409);
    expect(own.json).toMatchObject({
      issues: [
        {
          path: '[1].timestamp',
          message: `conversation "q" started at ${at(300)}: it cannot end before that, at ${at(0)}`,
        },
      ],
    });
    expect(await count('late-conv')).toBe(0);
    const session = [
      {
        type: 'track',
        event: 'Clicked',
        session_id: 'late-conv-2',
        user_id: 'late-conv-user',
        timestamp: at(0),
      },
      talk('late-conv-2', 300),
      { type: 'end_session', session_id: 'late-conv-2', timestamp: at(120) },
    ];
    const ended = await queue(t, session);
    expect(ended.status).toBe(409);
    expect(ended.json).toMatchObject({ issues: [{ path: '[2].timestamp' }] });
    // At or after the start, both end as before.
    expect(
      (await queue(t, [talk('late-conv', 300), { ...endConversation, timestamp: at(300) }])).status,
    ).toBe(200);
    const later = await queue(t, [...session.slice(0, 2), { ...session[2], timestamp: at(300) }]);
    expect(later.status).toBe(200);
    const stored = await storedEvents(t, 'late-conv-2');
    expect(byName(stored, 'Conversation Ended')[0]?.timestamp).toBe(at(300));
  });

  // Both were 200, storing Session Ended or Conversation Ended before a turn of theirs (found by probing).
  it('refuses an end before events of its session or conversation, stored or earlier in the request', async () => {
    const talk = (session: string, s: number) =>
      turn(session, at(s), { user: 'a', assistant: 'b' }, { user_id: 'late-end-user', conversation_id: 'r' });
    const endSession = (session: string, s: number) => ({
      type: 'end_session',
      session_id: session,
      timestamp: at(s),
    });
    const until = (what: string, s: number) =>
      `${what} has events until ${at(1800)}: it cannot end before them, at ${at(s)}`;
    const together = await queue(t, [
      talk('late-end-1', 0),
      talk('late-end-1', 1800),
      endSession('late-end-1', 900),
    ]);
    expect(together.status).toBe(409);
    expect(together.json).toMatchObject({
      code: 'conflict',
      issues: [{ path: '[2].timestamp', message: until('session "late-end-1"', 900) }],
    });
    expect(await count('late-end-1')).toBe(0);

    expect((await queue(t, [talk('late-end-2', 0), talk('late-end-2', 1800)])).status).toBe(200);
    const later = await queue(t, [endSession('late-end-2', 900)]);
    expect(later.status).toBe(409);
    expect(later.json).toMatchObject({
      issues: [{ path: '[0].timestamp', message: until('session "late-end-2"', 900) }],
    });
    const endConversation = (s: number) => ({
      type: 'track',
      event: 'Conversation Ended',
      session_id: 'late-end-2',
      conversation_id: 'r',
      timestamp: at(s),
    });
    const conversation = await queue(t, [endConversation(600)]);
    expect(conversation.status).toBe(409);
    expect(conversation.json).toMatchObject({
      issues: [{ path: '[0].timestamp', message: until('conversation "r"', 600) }],
    });
    // At their last event, both end.
    expect((await queue(t, [endConversation(1800), endSession('late-end-2', 1800)])).status).toBe(200);
    const stored = await storedEvents(t, 'late-end-2');
    expect(byName(stored, 'Conversation Ended').map((e) => e.timestamp)).toEqual([at(1800)]);
    expect(byName(stored, 'Session Ended').map((e) => e.timestamp)).toEqual([at(1800)]);
    expect(byName(stored, 'Conversation Turn')).toHaveLength(2);
  });
});

describe('ids the service made are ids like any other (decisions §4: each (project, event_id) once)', () => {
  const clicked = (extra: Record<string, unknown>) => ({
    type: 'track',
    event: 'Clicked',
    session_id: 'own-ids',
    user_id: 'own-ids-user',
    timestamp: at(1),
    ...extra,
  });

  async function resendAll(s: TestService): Promise<void> {
    const stored = await storedEvents(s, 'own-ids');
    const assigned = byName(stored, 'Clicked')[0]?.event_id ?? '';
    const started = byName(stored, 'Session Started')[0]?.event_id ?? '';
    expect(assigned).toMatch(/^e_/);
    expect(started).toMatch(/#session-started$/);
    // The assigned id, through a per-event route and the queue; a generated row's id is the service's
    // own (a caller's event under it would pass as that row's repeat and be lost): refused.
    const single = await s.post('/bc/v1/events/event/track', clicked({ event_id: assigned }));
    expect(single.status).toBe(200);
    expect((await queue(s, [clicked({ event_id: assigned })])).json).toEqual({
      status: 'ok',
      accepted: 0,
      duplicates: 1,
    });
    expect((await queue(s, [clicked({ event: 'Other', event_id: started })])).status).toBe(400);
    const after = await storedEvents(s, 'own-ids');
    expect(after.map((e) => e.event_id).sort()).toEqual(stored.map((e) => e.event_id).sort());
  }

  it('a re-sent event under the id the service assigned is a duplicate, also after a restart; a generated row id is refused', async () => {
    const dir = tempDir();
    let s = await startServiceOn(dir.path);
    try {
      const first = await s.post('/bc/v1/events/event/track', clicked({}));
      expect(first.status).toBe(200);
      await resendAll(s);
      // A restarted service knows the ids from the database, not from the requests it saw.
      await s.stop();
      s = await startServiceOn(dir.path);
      await resendAll(s);
    } finally {
      await s.stop();
      dir.cleanup();
    }
  });
});

describe('requests committed together', () => {
  it('answers each request on its own: a refused one does not sink those sent alongside', async () => {
    const sessions = Array.from({ length: 6 }, (_, i) => `together-${i}`);
    const results = await Promise.all(
      sessions.map((s, i) =>
        queue(t, [
          { type: 'start_session', session_id: s, device_id: `${s}-d`, timestamp: at(0) },
          // Every third request also sends a turn for a session that ended: 409 for that request only.
          ...(i % 3 === 2 ? [turn('dup-s', at(5), {})] : [turn(s, at(1), {})]),
        ]),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 409, 200, 200, 409]);
    for (const [i, s] of sessions.entries()) expect(await count(s)).toBe(i % 3 === 2 ? 0 : 3);
  });
});

describe('session and conversation states (spec part 3)', () => {
  it('needs a user or device for a new session (400)', async () => {
    const res = await queue(t, [turn('no-user', at(0), {})]);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ issues: [{ path: '[0].user_id' }] });
  });

  it('defaults to the single open conversation, then <session>/2 after it ends, merging end properties', async () => {
    const s = 'conv-s';
    const res = await queue(t, [
      { type: 'start_session', session_id: s, user_id: 'conv-user', timestamp: at(0) },
      {
        type: 'track',
        event: 'Conversation Started',
        session_id: s,
        timestamp: at(1),
        properties: { topic: 'billing' },
      },
      turn(s, at(2), {}),
      {
        type: 'track',
        event: 'Conversation Ended',
        session_id: s,
        timestamp: at(3),
        properties: { resolved: true },
      },
      turn(s, at(4), {}),
    ]);
    expect(res.status).toBe(200);
    const events = await storedEvents(t, s);
    expect(byName(events, 'Conversation Turn').map((e) => e.conversation_id)).toEqual([`${s}/1`, `${s}/2`]);
    const ended = await t.service.db.read.one<{ properties: string }>(
      "SELECT properties::VARCHAR AS properties FROM conversations WHERE conversation_id = 'conv-s/1'",
    );
    expect(JSON.parse(ended!.properties)).toEqual({ topic: 'billing', resolved: true });
    const closed = await queue(t, [turn(s, at(5), {}, { conversation_id: `${s}/1` })]);
    expect(closed.status).toBe(409);
    expect(closed.json).toMatchObject({
      code: 'conversation_closed',
      issues: [{ path: '[0].conversation_id' }],
    });
  });

  it('asks for conversation_id when several conversations are open (400 naming them)', async () => {
    const s = 'multi-s';
    await queue(t, [
      { type: 'start_session', session_id: s, device_id: 'multi-d', timestamp: at(0) },
      { type: 'track', event: 'Conversation Started', session_id: s, conversation_id: 'a', timestamp: at(1) },
      { type: 'track', event: 'Conversation Started', session_id: s, conversation_id: 'b', timestamp: at(2) },
    ]);
    const res = await queue(t, [turn(s, at(3), {})]);
    expect(res.status).toBe(400);
    expect((res.json as { message: string }).message).toContain('2 open conversations ("a", "b")');
    expect((await queue(t, [turn(s, at(4), {}, { conversation_id: 'b' })])).status).toBe(200);
  });

  it('keeps one user per session: another identified user is a conflict', async () => {
    await queue(t, [{ type: 'start_session', session_id: 'owned', user_id: 'owner', timestamp: at(0) }]);
    await queue(t, [{ type: 'identify', id: 'intruder' }]);
    const res = await queue(t, [turn('owned', at(1), {}, { user_id: 'intruder' })]);
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ code: 'conflict', issues: [{ path: '[0].user_id' }] });
    const same = await queue(t, [turn('owned', at(2), {}, { user_id: 'owner' })]);
    expect(same.status, JSON.stringify(same.json)).toBe(200);
    expect((await queue(t, [{ type: 'start_session', session_id: 'owned', user_id: 'owner' }])).status).toBe(
      409,
    );
  });

  it('gives a device-only session to the user the device is linked to, and dates a user by its first event', async () => {
    await queue(t, [{ type: 'identify', id: 'linked-user', device_id: 'linked-d', timestamp: at(100) }]);
    await queue(t, [
      { type: 'start_session', session_id: 'by-device', device_id: 'linked-d', timestamp: at(50) },
      turn('by-device', at(60), {}),
    ]);
    const events = await storedEvents(t, 'by-device');
    expect(new Set(events.map((e) => e.user_id))).toEqual(new Set(['linked-user']));
    // Imported history: the session's earlier timestamps move the user's creation back.
    expect((await userById(t, 'linked-user')).created_at).toBe(at(50));
  });

  it('sees identity changes made through the user routes while the session is open', async () => {
    await queue(t, [
      { type: 'start_session', session_id: 'routed', device_id: 'routed-d', timestamp: at(0) },
    ]);
    const linked = await t.post('/bc/v1/user/identify', { id: 'routed-user', device_id: 'routed-d' });
    expect(linked.status).toBe(200);
    // The route merged the device's anonymous user: the session's user is routed-user now.
    const res = await queue(t, [turn('routed', at(1), {}, { user_id: 'routed-user' })]);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const events = await storedEvents(t, 'routed');
    expect(new Set(events.map((e) => e.user_id))).toEqual(new Set(['routed-user']));
  });

  it('answers a repeated per-event post with the event stored under its id, and stores nothing new', async () => {
    const event = {
      session_id: 'rep',
      device_id: 'rep-d',
      event: 'Clicked',
      event_id: 'rep-1',
      timestamp: at(0),
    };
    const first = await t.post('/bc/v1/events/event/track', event);
    expect((first.json as unknown[]).length).toBe(2);
    const stored = (first.json as Array<{ event_id?: string }>).find((e) => e.event_id === 'rep-1');
    expect(stored).toMatchObject({ type: 'track', event: 'Clicked', session_id: 'rep', device_id: 'rep-d' });
    // decisions §4: "the request's own event as stored … plus the events it generated": the answer
    // the first post got, which a client retrying after losing it never saw.
    const again = await t.post('/bc/v1/events/event/track', event);
    expect(again).toEqual({ status: 200, json: first.json });
    expect(await storedEvents(t, 'rep')).toHaveLength(2);
  });

  it('answers a repeat of what ends or starts something as the first post was answered, generated events included', async () => {
    const post = (route: string, body: Record<string, unknown>) =>
      t.post(`/bc/v1/events/event/${route}`, body);
    const same = async (route: string, body: Record<string, unknown>) => {
      const first = await post(route, body);
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      expect((first.json as unknown[]).length).toBeGreaterThan(1);
      expect(await post(route, body)).toEqual(first);
    };
    const base = { session_id: 'rep-gen', user_id: 'rep-gen-user' };
    // On a new session: its Session Started.
    await same('start-conversation', { ...base, conversation_id: 'c1', event_id: 'rg-1', timestamp: at(0) });
    await post('conversation-turn', {
      ...base,
      conversation_id: 'c1',
      event_id: 'rg-2',
      timestamp: at(1),
      properties: { user: 'hi', assistant: 'hello' },
    });
    // Its Summary.
    await same('end-conversation', { ...base, conversation_id: 'c1', event_id: 'rg-3', timestamp: at(2) });
    await post('start-conversation', { ...base, conversation_id: 'c2', event_id: 'rg-4', timestamp: at(3) });
    // The open conversation's end and Summary.
    await same('end-session', { ...base, event_id: 'rg-5', timestamp: at(4) });
  });

  it('refuses an alias whose previous id nobody has: 404 on the per-event routes, as /user/alias; 409 naming [i].previous_id in a batch', async () => {
    const res = await queue(t, [{ type: 'alias', id: 'new-id', previous_id: 'nobody-has-this' }]);
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ issues: [{ path: '[0].previous_id' }] });
    const body = { type: 'alias', id: 'new-id', previous_id: 'nobody-has-this' };
    for (const path of ['/bc/v1/events/event/alias', '/bc/v1/events/event', '/bc/v1/user/alias']) {
      const single = await t.post(
        path,
        path.endsWith('user/alias') ? { id: body.id, previous_id: body.previous_id } : body,
      );
      expect(single.status, path).toBe(404);
      expect(single.json, path).toMatchObject({
        code: 'not_found',
        message: expect.stringContaining('nobody-has-this'),
      });
    }
    const ok = await queue(t, [
      { type: 'identify', id: 'al-old' },
      { type: 'alias', id: 'al-new', previous_id: 'al-old' },
    ]);
    expect(ok.status).toBe(200);
    expect((await userById(t, 'al-old')).aliases).toEqual(['al-old', 'al-new']);
  });
});

// The hosted API's analyses sent with an end were dropped without a word (found by probing).
describe("an app's own analyses with a conversation's end (the hosted API's fields)", () => {
  it('are kept on Conversation Ended, and its sentiment is the summary’s; a wrong one is refused at its path', async () => {
    const start = { type: 'start_session', session_id: 'ca-s', user_id: 'ca-user', timestamp: at(0) };
    expect(
      (
        await queue(t, [
          start,
          turn('ca-s', at(1), { user: 'Thanks, that works great, I love it' }, { conversation_id: 'c' }),
        ])
      ).status,
    ).toBe(200);
    const end = {
      type: 'track',
      event: 'Conversation Ended',
      session_id: 'ca-s',
      conversation_id: 'c',
      timestamp: at(2),
      conversation_analysis: { summary: 'angry user', sentiment: 'negative', cost: 0.5 },
      intent_analysis: {
        summary: 'wants a refund',
        sentiment: 'negative',
        intent_fulfilled: 'no',
        cost: 0.25,
      },
    };
    const bad = await t.post('/bc/v1/events/event/end-conversation', {
      ...end,
      conversation_analysis: { summary: 'x', sentiment: 'furious', cost: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ issues: [{ path: 'conversation_analysis.sentiment' }] });
    expect((await t.post('/bc/v1/events/event/end-conversation', end)).status).toBe(200);
    const stored = await storedEvents(t, 'ca-s');
    expect(byName(stored, 'Conversation Ended')[0]?.properties).toMatchObject({
      analysis_summary: 'angry user',
      analysis_sentiment: 'negative',
      analysis_cost: 0.5,
      intent_summary: 'wants a refund',
      intent_sentiment: 'negative',
      intent_fulfilled: 'no',
      intent_analysis_cost: 0.25,
    });
    const summary = byName(stored, 'Conversation Summary')[0]?.properties;
    expect(summary).toMatchObject({ sentiment: 'negative' });
    // The analysis' cost is its own, not the conversation's.
    expect(summary?.cost).toBe(0);
  });
});
