import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyBudget, meteredBody } from './body-budget.js';

function status(fn: () => unknown): number | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as { status?: number }).status;
  }
}

describe('BodyBudget', () => {
  it('admits bodies up to the budget, refuses with 503 beyond it, and takes returns', () => {
    const budget = new BodyBudget(100);
    const a = budget.reserve(40, 'a');
    const b = budget.reserve(40, 'b');
    expect(status(() => budget.reserve(30, 'c'))).toBe(503);
    a.release();
    a.release(); // giving back twice gives back once
    expect(budget.inFlight).toBe(40);
    expect(status(() => budget.reserve(30, 'c'))).toBeUndefined();
    b.release();
  });

  it('lets one address hold at most half, so others keep the rest', () => {
    const budget = new BodyBudget(100);
    budget.reserve(30, 'slow');
    expect(status(() => budget.reserve(30, 'slow'))).toBe(503);
    expect(status(() => budget.reserve(30, 'other'))).toBeUndefined();
  });

  it('admits one body bigger than the budget when nothing else is in flight', () => {
    const budget = new BodyBudget(10);
    const release = budget.reserve(50, 'a');
    expect(status(() => budget.reserve(1, 'b'))).toBe(503);
    release.release();
    expect(budget.inFlight).toBe(0);
  });

  it('grows a reservation by the same rules, counting what it already holds as its own', () => {
    const budget = new BodyBudget(100);
    const streamed = budget.reserve(0, 'a');
    streamed.cover(40);
    streamed.cover(45);
    // Alone, a body grows past the address's half (and the budget) rather than being refused.
    streamed.cover(120);
    expect(budget.inFlight).toBe(120);
    streamed.cover(10); // never shrinks
    expect(budget.inFlight).toBe(120);
    expect(status(() => budget.reserve(1, 'b'))).toBe(503);
    streamed.release();
    streamed.cover(30); // released: holds nothing more
    expect(budget.inFlight).toBe(0);

    const first = budget.reserve(30, 'a');
    const second = budget.reserve(0, 'a');
    second.cover(20);
    expect(status(() => second.cover(21))).toBe(503);
    expect(budget.inFlight).toBe(50);
    first.release();
    second.cover(21);
    second.release();
    expect(budget.inFlight).toBe(0);
  });
});

describe('meteredBody', () => {
  const read = async (stream: Readable) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  };

  it('passes the body on, covering each chunk as it arrives', async () => {
    const budget = new BodyBudget(100);
    const reservation = budget.reserve(0, 'a');
    const body = meteredBody(Readable.from([Buffer.from('abc'), Buffer.from('defg')]), reservation);
    expect(await read(body)).toBe('abcdefg');
    expect(budget.inFlight).toBe(7);
    reservation.release();
    expect(budget.inFlight).toBe(0);
  });

  it('ends the body with 503 at the chunk the budget cannot cover', async () => {
    const budget = new BodyBudget(100);
    const other = budget.reserve(30, 'a');
    const reservation = budget.reserve(0, 'a');
    const chunks = ['x'.repeat(15), 'x'.repeat(15), 'x'.repeat(15)].map((c) => Buffer.from(c));
    const error = await read(meteredBody(Readable.from(chunks), reservation)).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, headers: { 'retry-after': '2' } });
    expect(budget.inFlight).toBe(45);
    other.release();
    reservation.release();
    expect(budget.inFlight).toBe(0);
  });

  it('keeps the encoded length of a decoded body, which fastify checks against Content-Length', () => {
    const decoded = Object.assign(Readable.from([]), { receivedEncodedLength: 12 });
    const body = meteredBody(decoded, new BodyBudget(100).reserve(0, 'a'));
    expect((body as Readable & { receivedEncodedLength?: number }).receivedEncodedLength).toBe(12);
  });
});
