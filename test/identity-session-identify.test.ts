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
