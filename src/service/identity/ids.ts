import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `u_` + a 26-character ULID (48-bit time + 80 random bits), so service ids sort by creation. */
export function newUserId(now = Date.now()): string {
  let time = now;
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = CROCKFORD[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  const random = randomBytes(16);
  let randomPart = '';
  for (let i = 0; i < 16; i++) randomPart += CROCKFORD[(random[i] ?? 0) % 32];
  return `u_${timePart}${randomPart}`;
}

/** decisions §3: deterministic, so re-imports of a device-only history converge on one anonymous user. */
export function anonymousId(deviceId: string): string {
  return `anon_${createHash('sha256').update(deviceId, 'utf8').digest('hex').slice(0, 16)}`;
}
