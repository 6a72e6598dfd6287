import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userRecordSchema } from '../src/shared/users.js';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

describe('POST /bc/v1/user/identify', () => {
  // Their bodies read "Invalid input" and "Invalid input: expected string, received undefined" (found by probing).
  it('says what is wrong in words: a missing field is required, a value of another type names the types', async () => {
    const trait = await t.post('/bc/v1/user/identify', { id: 'words', traits: { plan: null, seats: {} } });
    expect(trait.status).toBe(400);
    expect(trait.json).toMatchObject({
      issues: [
        { path: 'traits.plan', message: 'must be a string, a number or a boolean' },
        { path: 'traits.seats', message: 'must be a string, a number or a boolean' },
      ],
    });
    const alias = await t.post('/bc/v1/user/alias', { id: 7 });
    expect(alias.status).toBe(400);
    expect(alias.json).toMatchObject({
      issues: [
        { path: 'id', message: 'must be a string' },
        { path: 'previous_id', message: 'required' },
      ],
    });
  });

  it('creates a user with every field of the spec and merges traits on a second identify', async () => {
    const first = await t.post('/bc/v1/user/identify', {
      id: 'alice',
      traits: { plan: 'pro', seats: 2, beta: true },
    });
    expect(first.status).toBe(200);
    const record = userRecordSchema.parse(first.json);
    expect(record).toMatchObject({ app_id: 'test-project', id: 'alice', aliases: ['alice'] });
    expect(record.user_id).toMatch(/^u_[0-9A-Z]{26}$/);
    expect(record.organization_id).not.toBe('');
    expect(Date.parse(record.created_at)).not.toBeNaN();

    const second = await t.post('/bc/v1/user/identify', {
      id: 'alice',
      traits: { plan: 'team', region: 'eu' },
    });
    expect(second.json).toMatchObject({
      user_id: record.user_id,
      traits: { plan: 'team', seats: 2, beta: true, region: 'eu' },
    });
  });

  it('gives a device-only identify an anonymous user, merged into the user when the device is linked', async () => {
    const anon = userRecordSchema.parse(
      (await t.post('/bc/v1/user/identify', { device_id: 'dev-1', traits: { os: 'ios' } })).json,
    );
    expect(anon.id).toMatch(/^anon_[0-9a-f]{16}$/);
    const again = userRecordSchema.parse((await t.post('/bc/v1/user/identify', { device_id: 'dev-1' })).json);
    expect(again.user_id).toBe(anon.user_id);

    const bob = userRecordSchema.parse(
      (await t.post('/bc/v1/user/identify', { id: 'bob', traits: { plan: 'free' } })).json,
    );
    const linked = userRecordSchema.parse(
      (await t.post('/bc/v1/user/identify', { id: 'bob', device_id: 'dev-1' })).json,
    );
    expect(linked.user_id).toBe(bob.user_id);
    expect(linked.aliases).toEqual(expect.arrayContaining(['bob', anon.id]));
    expect(linked.traits).toEqual({ os: 'ios', plan: 'free' });
    // The device now resolves to bob, not to a new anonymous user.
    const byDevice = userRecordSchema.parse(
      (await t.post('/bc/v1/user/identify', { device_id: 'dev-1' })).json,
    );
    expect(byDevice.user_id).toBe(bob.user_id);
  });

  const queue = (events: object[]) => t.post('/bc/v1/events/queue', events);
  const turn = { type: 'track', event: 'Conversation Turn', properties: { user: 'hi', assistant: 'hello' } };

  it("links a device any event of a user's session names, not only the one that opened it", async () => {
    // The device's own session first: its anonymous user holds data.
    const alone = await queue([
      { ...turn, session_id: 'dev-2-s', device_id: 'dev-2', timestamp: '2025-01-02T10:00:00Z' },
    ]);
    expect(alone.status, JSON.stringify(alone.json)).toBe(200);
    const dana = [
      { ...turn, session_id: 'dana-s', user_id: 'dana', timestamp: '2025-01-02T11:00:00Z' },
      {
        ...turn,
        session_id: 'dana-s',
        user_id: 'dana',
        device_id: 'dev-2',
        timestamp: '2025-01-02T11:01:00Z',
      },
    ];
    expect((await queue(dana)).status).toBe(200);
    const byDevice = userRecordSchema.parse(
      (await t.post('/bc/v1/user/identify', { device_id: 'dev-2' })).json,
    );
    expect(byDevice.id).toBe('dana');
    expect(byDevice.aliases).toEqual(expect.arrayContaining(['dana', expect.stringMatching(/^anon_/)]));
  });

  it("links the device of the event that names an anonymous session's user, besides the session's own", async () => {
    // Another device's anonymous user holds data, then a session starts on dev-3 with nobody logged in.
    const other = { ...turn, session_id: 'dev-4-s', device_id: 'dev-4', timestamp: '2025-01-03T09:00:00Z' };
    const anonymous = { ...turn, session_id: 'eve-s', device_id: 'dev-3', timestamp: '2025-01-03T10:00:00Z' };
    expect((await queue([other, anonymous])).status).toBe(200);
    // Eve logs in on the session from dev-4: both devices are hers now, and dev-4's anonymous data too.
    const login = { ...anonymous, user_id: 'eve', device_id: 'dev-4', timestamp: '2025-01-03T10:01:00Z' };
    expect((await queue([login])).status).toBe(200);
    for (const device of ['dev-3', 'dev-4']) {
      const byDevice = userRecordSchema.parse(
        (await t.post('/bc/v1/user/identify', { device_id: device })).json,
      );
      expect(byDevice.id, device).toBe('eve');
    }
  });

  it('rejects a body with neither id nor device_id, naming the problem', async () => {
    const res = await t.post('/bc/v1/user/identify', { traits: { a: 1 } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ status: 400, code: 'invalid_input' });
    expect(JSON.stringify(res.json)).toMatch(/id and device_id/);
  });

  it('rejects null and object trait values and reserved keys with the JSON path', async () => {
    const nul = await t.post('/bc/v1/user/identify', { id: 'x', traits: { a: null } });
    expect(nul.status).toBe(400);
    expect(nul.json).toMatchObject({ issues: [{ path: 'traits.a' }] });
    const proto = await t.post('/bc/v1/user/identify', '{"id":"x","traits":{"__proto__":{"admin":true}}}');
    expect(proto.status).toBe(400);
    expect(proto.json).toMatchObject({ issues: [{ path: 'traits.__proto__' }] });
  });
});

describe('POST /bc/v1/user/alias', () => {
  it('makes the new id primary and keeps every id in aliases, in order of first use', async () => {
    const carol = userRecordSchema.parse((await t.post('/bc/v1/user/identify', { id: 'carol' })).json);
    const aliased = await t.post('/bc/v1/user/alias', { id: 'carol@example.com', previous_id: 'carol' });
    expect(aliased.status).toBe(200);
    expect(aliased.json).toMatchObject({
      user_id: carol.user_id,
      id: 'carol@example.com',
      aliases: ['carol', 'carol@example.com'],
    });
    // Either id still finds her.
    const viaOld = userRecordSchema.parse((await t.post('/bc/v1/user/identify', { id: 'carol' })).json);
    expect(viaOld.user_id).toBe(carol.user_id);
  });

  it('answers 404 for an unknown previous id and 409 for an id owned by someone else', async () => {
    expect((await t.post('/bc/v1/user/alias', { id: 'new', previous_id: 'nobody' })).status).toBe(404);
    await t.post('/bc/v1/user/identify', { id: 'dave' });
    await t.post('/bc/v1/user/identify', { id: 'erin' });
    const clash = await t.post('/bc/v1/user/alias', { id: 'erin', previous_id: 'dave' });
    expect(clash.status).toBe(409);
    expect(clash.json).toMatchObject({ code: 'conflict', issues: [{ path: 'id' }] });
  });
});

describe('wire basics (decisions §1)', () => {
  it('authenticates: missing credentials 401, wrong key or foreign project 403, bare key accepted', async () => {
    const body = { id: 'z' };
    expect((await t.post('/bc/v1/user/identify', body, { authorization: '', 'x-app-id': '' })).status).toBe(
      401,
    );
    expect((await t.post('/bc/v1/user/identify', body, { 'x-app-id': '' })).status).toBe(401);
    expect((await t.post('/bc/v1/user/identify', body, { authorization: 'Bearer wrong' })).status).toBe(403);
    expect((await t.post('/bc/v1/user/identify', body, { 'x-app-id': 'someone-elses' })).status).toBe(403);
    expect((await t.post('/bc/v1/user/identify', body, { authorization: t.apiKey })).status).toBe(200);
  });

  it('checks route before credentials, credentials before content type and size', async () => {
    expect((await t.post('/bc/v1/nope', {}, { authorization: '' })).status).toBe(404);
    const wrongMethod = await t.get('/bc/v1/user/identify', { authorization: '' });
    expect(wrongMethod.status).toBe(405);
    expect(
      (await t.post('/bc/v1/user/identify', 'id=x', { 'content-type': 'text/plain', authorization: '' }))
        .status,
    ).toBe(401);
    expect((await t.post('/bc/v1/user/identify', 'id=x', { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('refuses a 20 MB body with 413 and malformed JSON with 400, and keeps serving', async () => {
    const big = await t.post(
      '/bc/v1/user/identify',
      JSON.stringify({ id: 'x', traits: { blob: 'x'.repeat(20 * 1024 * 1024) } }),
    );
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ code: 'payload_too_large' });
    const broken = await t.post('/bc/v1/user/identify', '{"id": ');
    expect(broken.status).toBe(400);
    expect(broken.json).toMatchObject({ code: 'invalid_input' });
    expect((await t.post('/bc/v1/user/identify', { id: 'still-alive' })).status).toBe(200);
  });

  it('serves /healthz without credentials and an OpenAPI document listing the routes', async () => {
    const health = await t.get('/healthz', { authorization: '', 'x-app-id': '' });
    expect(health).toMatchObject({ status: 200, json: { status: 'ok' } });
    const doc = (await t.get('/bc/v1/openapi.json')).json as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/bc/v1/user/identify', '/bc/v1/user/alias', '/healthz']),
    );
    expect(JSON.stringify(doc.paths['/bc/v1/user/identify'])).toContain('device_id');
  });

  it('finishes in-flight requests on close before closing the database', async () => {
    const other = await startTestService({ apiKey: 'k2', projectId: 'p2' });
    // Hold the writer so the requests are parked inside their handlers when close() begins.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = other.service.db.write(() => gate);
    const inflight = Array.from({ length: 10 }, (_, i) =>
      other.post('/bc/v1/user/identify', { id: `user-${i}` }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const closing = other.stop();
    release();
    await held;
    const results = await Promise.all(inflight);
    await closing;
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
  });
});
