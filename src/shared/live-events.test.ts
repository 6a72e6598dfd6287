import { describe, expect, it } from 'vitest';
import { realtimeResponseSchema } from './live-events.js';

describe('realtimeResponseSchema', () => {
  it('takes a key a request header can carry, and refuses one it cannot (ERR_INVALID_CHAR before)', () => {
    expect(realtimeResponseSchema.safeParse({ authorization_key: 'lek1.eyJ.sig-_' }).success).toBe(true);
    for (const key of ['key中', 'a b', 'x\n']) {
      const parsed = realtimeResponseSchema.safeParse({ authorization_key: key });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/printable ASCII/);
    }
  });
});
