import { type Readable, Transform } from 'node:stream';
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
 * one until its answer is sent: buffered bytes, then the parsed value waiting for its turn. A request
 * with a Content-Length reserves it before a byte is read, so a thousand clients each sending all but
 * the last byte of a 10 MiB body hold at most the budget; a chunked (or compressed) one is charged its
 * bytes as they arrive (`meteredBody`), since reserving the body limit for each would let a few small
 * streamed bodies fill an address's share. Beyond the budget a request is refused with 503 and
 * Retry-After, which clients retry. One address may hold at most half of it, so slow clients from one
 * place leave the other half to everyone else.
 */
export class BodyBudget {
  private used = 0;
  private readonly byAddress = new Map<string, number>();

  /** `what` names the bytes in its refusals: request bodies, or answers not yet sent (`answer-budget.ts`). */
  constructor(
    private readonly budget: number,
    private readonly what = 'request bodies',
  ) {}

  /**
   * Reserves `bytes` for `address` or throws 503; the reservation may grow (`cover`) and is given
   * back by `release` (once, however often called). With nothing else in flight (for that address)
   * a body within the body limit is admitted whatever its size, so a budget set below that limit
   * slows big bodies down instead of refusing them forever.
   */
  reserve(bytes: number, address: string): Reservation {
    const reservation = new Reservation(this, address);
    reservation.cover(bytes);
    return reservation;
  }

  /** Adds `bytes` to what `address` holds, `held` of which is the caller's own; throws 503 beyond the budget. */
  grow(bytes: number, address: string, held: number): void {
    const mine = this.byAddress.get(address) ?? 0;
    if (this.used > held && this.used + bytes > this.budget) {
      throw full(`the service holds ${this.used} bytes of ${this.what}, near its limit of ${this.budget}`);
    }
    if (mine > held && mine + bytes > this.budget / 2) {
      throw full(`this address has ${mine} bytes of ${this.what} in flight, half the service's limit`);
    }
    this.used += bytes;
    this.byAddress.set(address, mine + bytes);
  }

  shrink(bytes: number, address: string): void {
    this.used -= bytes;
    const left = (this.byAddress.get(address) ?? bytes) - bytes;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address);
  }

  get inFlight(): number {
    return this.used;
  }
}

/** One request's share of the budget. */
export class Reservation {
  private held = 0;
  private released = false;

  constructor(
    private readonly budget: BodyBudget,
    private readonly address: string,
  ) {}

  /** Grows the reservation to `bytes` if it holds fewer; throws 503 when the budget cannot. */
  cover(bytes: number): void {
    if (this.released || bytes <= this.held) return;
    this.budget.grow(bytes - this.held, this.address, this.held);
    this.held = bytes;
  }

  /** Gives the bytes back; later `cover` calls hold nothing. An arrow: it is handed to event emitters. */
  readonly release = (): void => {
    if (this.released) return;
    this.released = true;
    this.budget.shrink(this.held, this.address);
    this.held = 0;
  };
}

/** What fastify compares with Content-Length when preParsing hands it a decoded stream. */
type Encoded = Readable & { receivedEncodedLength?: number };

/**
 * The body as fastify will read it, each chunk covered by `reservation` before it is passed on: the
 * reservation grows with the bytes read so far, and a chunk it cannot cover ends the body with the
 * budget's 503. The bytes counted are those fastify buffers (decoded, for a compressed body).
 */
export function meteredBody(payload: Encoded, reservation: Reservation): Readable {
  let read = 0;
  const out: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      read += chunk.length;
      try {
        reservation.cover(read);
      } catch (error) {
        done(error as Error);
        return;
      }
      done(null, chunk);
    },
  });
  // A decoded body's encoded length is what fastify checks Content-Length against.
  if (payload.receivedEncodedLength !== undefined) {
    Object.defineProperty(out, 'receivedEncodedLength', { get: () => payload.receivedEncodedLength });
  }
  payload.on('error', (error) => out.destroy(error));
  return payload.pipe(out);
}
