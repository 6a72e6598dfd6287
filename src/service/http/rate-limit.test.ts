import { describe, expect, it } from 'vitest';
import type { ServiceError } from '../errors.js';
import { AuthFailureLimiter, RateLimiter } from './rate-limit.js';

function limiter() {
  let now = 0;
  const rl = new RateLimiter({
    ingestPerSecond: 2,
    ingestBurst: 4,
    chartPerSecond: 1,
    chartBurst: 1,
    now: () => now,
  });
  return { rl, advance: (ms: number) => (now += ms) };
}

function refusal(fn: () => void): ServiceError | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error as ServiceError;
  }
}

describe('RateLimiter', () => {
  it('allows the burst, then refuses with 429 and Retry-After until tokens refill', () => {
    const { rl, advance } = limiter();
    for (let i = 0; i < 4; i++) rl.take('k', 'ingest');
    const refused = refusal(() => rl.take('k', 'ingest'));
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', headers: { 'retry-after': '1' } });
    advance(500);
    expect(refusal(() => rl.take('k', 'ingest'))).toBeUndefined();
  });

  it('keeps keys and route kinds apart', () => {
    const { rl } = limiter();
    rl.take('a', 'chart');
    expect(refusal(() => rl.take('a', 'chart'))?.status).toBe(429);
    expect(refusal(() => rl.take('b', 'chart'))).toBeUndefined();
    expect(refusal(() => rl.take('a', 'ingest'))).toBeUndefined();
  });

  it('states the wait in whole seconds, at least one', () => {
    const { rl } = limiter();
    rl.take('k', 'chart');
    expect(refusal(() => rl.take('k', 'chart'))?.headers).toEqual({ 'retry-after': '1' });
  });
});

describe('AuthFailureLimiter', () => {
  it('lets an address fail a burst of times, then refuses it with 429 until the bucket refills', () => {
    let now = 0;
    const limiter = new AuthFailureLimiter(2, 3, () => now);
    for (let i = 0; i < 3; i++) {
      expect(refusal(() => limiter.check('10.0.0.1'))).toBeUndefined();
      limiter.failed('10.0.0.1');
    }
    expect(refusal(() => limiter.check('10.0.0.1'))).toMatchObject({
      status: 429,
      code: 'rate_limited',
      headers: { 'retry-after': '1' },
    });
    // Another address is not affected, and successes (no failed()) spend nothing.
    expect(refusal(() => limiter.check('10.0.0.2'))).toBeUndefined();
    now += 500;
    expect(refusal(() => limiter.check('10.0.0.1'))).toBeUndefined();
  });

  it('with a rate of 0 never refuses', () => {
    const limiter = new AuthFailureLimiter(0, 1);
    for (let i = 0; i < 10; i++) limiter.failed('a');
    expect(refusal(() => limiter.check('a'))).toBeUndefined();
  });
});
