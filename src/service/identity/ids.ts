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

/** The largest time a ULID holds: 48 bits of milliseconds (the year 10889). */
const MAX_TIME = 2 ** 48 - 1;

/**
 * A 26-character ULID (48-bit time + 80 random bits): ids that sort by creation and never collide.
 * A time the 48 bits cannot hold is clamped: history from before 1970 (a user identified in 1950)
 * makes ids of time 0, still unique by their random part, where a negative time made an id of
 * "undefined"s that the user routes then refused as too long.
 */
export function newUlid(now = Date.now()): string {
  let time = Number.isFinite(now) ? Math.min(Math.max(0, Math.floor(now)), MAX_TIME) : 0;
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
