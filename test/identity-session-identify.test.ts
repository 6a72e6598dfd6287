import { afterEach, describe, expect, it } from 'vitest';
import { userRecordSchema } from '../src/shared/users.js';
import { queue } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * An identify in a session names the session's user when it names none (interface spec part 1: a
 * session's identify associates the device with the session's user), whichever came first.
 */
const services: TestService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
});

const turn = {
  type: 'track',
  event: 'Conversation Turn',
  session_id: 's1',
  conversation_id: 'c1',
  user_id: 'A',
  timestamp: '2025-01-01T08:00:00Z',
  properties: { user: 'hi', assistant: 'yo' },
};
const deviceIdentify = {
  type: 'identify',
  session_id: 's1',
  device_id: 'D2',
  traits: { plan: 'pro' },
  timestamp: '2025-01-01T08:01:00Z',
};

describe("an identify in an identified user's session that names only a device", () => {
  for (const [name, order] of [
    ['after the session began', [turn, deviceIdentify]],
    ['before its events came', [deviceIdentify, turn]],
  ] as const) {
    it(`is that user's: one person, its traits, its device (${name})`, async () => {
      const t = await startTestService();
      services.push(t);
      for (const event of order) {
        const res = await queue(t, [event]);
        expect(res.status, JSON.stringify(res.json)).toBe(200);
      }
      const list = await t.get('/bc/v1/user/list');
      expect(list.json).toMatchObject({ total: 1 });
      const byDevice = await t.post('/bc/v1/user/identify', { device_id: 'D2' });
      expect(userRecordSchema.parse(byDevice.json)).toMatchObject({ id: 'A', traits: { plan: 'pro' } });
    });
  }
});

describe("an alias in another identified user's session", () => {
  it('is refused (409), as an identify of that user there is', async () => {
    const t = await startTestService();
    services.push(t);
    const other = { type: 'identify', user_id: 'B', timestamp: '2025-01-01T08:00:00Z' };
    expect((await queue(t, [turn, other])).status).toBe(200);
    const identifyThere = await queue(t, [{ ...other, session_id: 's1', timestamp: '2025-01-01T08:01:00Z' }]);
    expect(identifyThere.status).toBe(409);
    const aliasThere = await queue(t, [
      { type: 'alias', id: 'B2', previous_id: 'B', session_id: 's1', timestamp: '2025-01-01T08:01:00Z' },
    ]);
    expect(aliasThere.status, JSON.stringify(aliasThere.json)).toBe(409);
    expect(aliasThere.json).toMatchObject({ issues: [{ path: '[0].previous_id' }] });
    // The session's own user may alias there.
    const own = await queue(t, [
      { type: 'alias', id: 'A2', previous_id: 'A', session_id: 's1', timestamp: '2025-01-01T08:02:00Z' },
    ]);
    expect(own.status, JSON.stringify(own.json)).toBe(200);
  });
});
