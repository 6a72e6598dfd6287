import { ServiceError } from '../errors.js';

export type Bucket = 'ingest' | 'chart';

interface State {
  tokens: number;
  updated: number;
}

export interface RateLimitOptions {
  ingestPerSecond: number;
  ingestBurst: number;
  chartPerSecond: number;
  chartBurst: number;
  now?: () => number;
}

/**
 * Token buckets per API key and kind of route (decisions §2). Keyed by the key's hash, so a key
 * shared by many projects of one organization shares its budget, as the limit is the key's.
 * Idle buckets are dropped so a stream of random bad keys cannot grow the map (only authenticated
 * requests reach here anyway).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, State>();
  private readonly now: () => number;
  private lastSweep = 0;

  constructor(private readonly options: RateLimitOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Takes one token or throws 429 with the seconds until one is available. */
  take(keyHash: string, bucket: Bucket): void {
    const rate = bucket === 'chart' ? this.options.chartPerSecond : this.options.ingestPerSecond;
    const burst = bucket === 'chart' ? this.options.chartBurst : this.options.ingestBurst;
    if (rate <= 0) return;
    const now = this.now();
    this.sweep(now);
    const id = `${bucket}:${keyHash}`;
    const state = this.buckets.get(id) ?? { tokens: burst, updated: now };
    state.tokens = Math.min(burst, state.tokens + ((now - state.updated) / 1000) * rate);
    state.updated = now;
    this.buckets.set(id, state);
    if (state.tokens >= 1) {
      state.tokens -= 1;
      return;
    }
    const seconds = Math.max(1, Math.ceil((1 - state.tokens) / rate));
    throw new ServiceError(
      429,
      'rate_limited',
      `rate limit of ${rate} ${bucket} requests/s exceeded; retry in ${seconds} s`,
      undefined,
      {
        'retry-after': String(seconds),
      },
    );
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, state] of this.buckets) if (now - state.updated > 60_000) this.buckets.delete(id);
  }
}
