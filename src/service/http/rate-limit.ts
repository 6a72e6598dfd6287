import { ServiceError } from '../errors.js';

export type Bucket = 'ingest' | 'chart';

interface State {
  tokens: number;
  updated: number;
}

/**
 * Token buckets by id, each holding up to `burst` tokens and refilled at `rate` per second.
 * Buckets idle for a minute are dropped (a full bucket is the same as none), so ids that come and go
 * (random bad keys, many addresses) cannot grow the map beyond what a minute brings.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, State>();
  private lastSweep = 0;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Seconds until `id` has a whole token again; 0 when it has one now (or there is no limit). */
  wait(id: string): number {
    if (this.rate <= 0) return 0;
    const state = this.refill(id);
    return state.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - state.tokens) / this.rate));
  }

  /** Takes one token if there is one; otherwise the seconds until there will be. */
  take(id: string): number {
    const seconds = this.wait(id);
    if (seconds === 0 && this.rate > 0) this.refill(id).tokens -= 1;
    return seconds;
  }

  private refill(id: string): State {
    const now = this.now();
    this.sweep(now);
    const state = this.buckets.get(id) ?? { tokens: this.burst, updated: now };
    state.tokens = Math.min(this.burst, state.tokens + ((now - state.updated) / 1000) * this.rate);
    state.updated = now;
    this.buckets.set(id, state);
    return state;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, state] of this.buckets) if (now - state.updated > 60_000) this.buckets.delete(id);
  }
}

export interface RateLimitOptions {
  ingestPerSecond: number;
  ingestBurst: number;
  chartPerSecond: number;
  chartBurst: number;
  now?: () => number;
}

function rateLimited(message: string, seconds: number): ServiceError {
  return new ServiceError(429, 'rate_limited', message, undefined, { 'retry-after': String(seconds) });
}

/**
 * Token buckets per API key and kind of route (decisions §2). Keyed by the key's hash, so a key
 * shared by many projects of one organization shares its budget, as the limit is the key's.
 * Only authenticated requests reach here; failed ones are limited per address (AuthFailureLimiter).
 */
export class RateLimiter {
  private readonly ingest: TokenBuckets;
  private readonly chart: TokenBuckets;

  constructor(private readonly options: RateLimitOptions) {
    this.ingest = new TokenBuckets(options.ingestPerSecond, options.ingestBurst, options.now);
    this.chart = new TokenBuckets(options.chartPerSecond, options.chartBurst, options.now);
  }

  /** Takes one token or throws 429 with the seconds until one is available. */
  take(keyHash: string, bucket: Bucket): void {
    const seconds = (bucket === 'chart' ? this.chart : this.ingest).take(keyHash);
    if (seconds === 0) return;
    const rate = bucket === 'chart' ? this.options.chartPerSecond : this.options.ingestPerSecond;
    throw rateLimited(`rate limit of ${rate} ${bucket} requests/s exceeded; retry in ${seconds} s`, seconds);
  }
}

/**
 * Failed authentications (401/403) per remote address: a burst of failures empties the address's
 * bucket, and until it refills every request from there that needs a key is refused with 429 before
 * its key is even looked at; otherwise a guesser would still learn which guess is right.
 */
export class AuthFailureLimiter {
  private readonly failures: TokenBuckets;

  constructor(
    private readonly perSecond: number,
    burst: number,
    now?: () => number,
  ) {
    this.failures = new TokenBuckets(perSecond, burst, now);
  }

  /** Throws 429 while `address` has no failures left to spend. */
  check(address: string): void {
    const seconds = this.failures.wait(address);
    if (seconds === 0) return;
    throw rateLimited(
      `too many failed authentications from this address (at most ${this.perSecond}/s); retry in ${seconds} s`,
      seconds,
    );
  }

  failed(address: string): void {
    this.failures.take(address);
  }
}
