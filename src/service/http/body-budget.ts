import { ServiceError } from '../errors.js';

/** Seconds a client is told to wait: bodies in flight are answered or time out within seconds. */
const RETRY_AFTER_S = 2;

function full(message: string): ServiceError {
  return new ServiceError(503, 'unavailable', `${message}; retry in ${RETRY_AFTER_S} s`, undefined, {
    'retry-after': String(RETRY_AFTER_S),
  });
}

/**
 * Bytes of request bodies the service holds at once, from the moment a request may start sending
 * one until its answer is sent: buffered bytes, then the parsed value waiting for its turn. Each
 * request reserves its Content-Length (a chunked one, the body limit) before a byte is read, so a
 * thousand clients each sending all but the last byte of a 10 MiB body hold at most the budget;
 * beyond it a request is refused with 503 and Retry-After, which clients retry. One address may hold
 * at most half of it, so slow clients from one place leave the other half to everyone else.
 */
export class BodyBudget {
  private used = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly budget: number) {}

  /**
   * Reserves `bytes` for `address` or throws 503; the returned function gives them back (once,
   * however often called). With nothing in flight (for that address) a body within the body limit
   * is admitted whatever its size, so a budget set below that limit slows big bodies down instead
   * of refusing them forever.
   */
  reserve(bytes: number, address: string): () => void {
    if (bytes <= 0) return () => undefined;
    const mine = this.byAddress.get(address) ?? 0;
    if (this.used > 0 && this.used + bytes > this.budget) {
      throw full(`the service holds ${this.used} bytes of request bodies, near its limit of ${this.budget}`);
    }
    if (mine > 0 && mine + bytes > this.budget / 2) {
      throw full(`this address has ${mine} bytes of request bodies in flight, half the service's limit`);
    }
    this.used += bytes;
    this.byAddress.set(address, mine + bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      const left = (this.byAddress.get(address) ?? bytes) - bytes;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    };
  }

  get inFlight(): number {
    return this.used;
  }
}
