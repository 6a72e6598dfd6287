import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let pool = randomBytes(0);
let poolAt = 0;

/** Random bytes from a pooled buffer: one crypto call per 4 KiB, not one per id (imports create many). */
function random(n: number): Uint8Array {
  if (poolAt + n > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += n;
  return pool.subarray(poolAt - n, poolAt);
}

/** A 26-character ULID (48-bit time + 80 random bits): ids that sort by creation and never collide. */
export function newUlid(now = Date.now()): string {
  let time = now;
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = CROCKFORD[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  let randomPart = '';
  for (const byte of random(16)) randomPart += CROCKFORD[byte % 32];
  return `${timePart}${randomPart}`;
}

/** `u_` + a ULID, so service user ids sort by creation. */
export function newUserId(now = Date.now()): string {
  return `u_${newUlid(now)}`;
}

/** decisions §3: deterministic, so re-imports of a device-only history converge on one anonymous user. */
export function anonymousId(deviceId: string): string {
  return `anon_${createHash('sha256').update(deviceId, 'utf8').digest('hex').slice(0, 16)}`;
}
