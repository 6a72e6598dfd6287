import { afterAll, describe, expect, it } from 'vitest';
import { anonymousId } from '../src/service/identity/ids.js';
import { userRecordSchema } from '../src/shared/users.js';
import { startServiceOn, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/** decisions §3: only a device's anonymous user merges into the user who identifies on it. */
const dir = tempDir('cas-aliased-device-');
afterAll(() => dir.cleanup());

async function identify(t: TestService, body: Record<string, unknown>) {
  const res = await t.post('/bc/v1/user/identify', body);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return userRecordSchema.parse(res.json);
}

describe('a device whose anonymous user an alias named', () => {
  it('moves to the next user who identifies on it; the aliased user keeps its id and data (it was merged away), also after a restart', async () => {
    const anon = anonymousId('dd');
    let t = await startServiceOn(dir.path);
    try {
      await identify(t, { device_id: 'dd', traits: { seen: 'anon' } });
      const aliased = await t.post('/bc/v1/user/alias', { id: 'carol', previous_id: anon });
      expect(aliased.status).toBe(200);
      // A restart reads the user as stored: identified now.
      await t.stop();
      t = await startServiceOn(dir.path);
      const dave = await identify(t, { id: 'dave', device_id: 'dd' });
      expect(dave.aliases).toEqual(['dave']);
      expect(dave.traits).toEqual({});
      const carol = await identify(t, { id: 'carol' });
      expect(carol).toMatchObject({ id: 'carol', aliases: [anon, 'carol'], traits: { seen: 'anon' } });
      expect(carol.user_id).not.toBe(dave.user_id);
      // The device is dave's now: a device-only identify resolves to him.
      expect((await identify(t, { device_id: 'dd' })).user_id).toBe(dave.user_id);
    } finally {
      await t.stop();
    }
  });
});
