import { describe, expect, it } from 'vitest';
import { Delivery, laneOf, type Refusal } from './delivery.js';
import type { OutEvent, WireJson } from './types.js';

const ev = (session: string, n: number): OutEvent => ({
  event: { type: 'track', event: 'E', session_id: session, event_id: `${session}-${n}`, n },
  seq: n,
  laneKey: session,
  source: { file: 'f', line: n + 1 },
  raw: undefined,
  synthesized: false,
});

class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

/**
 * The service's contract for one request, in process: all or nothing, issues naming `[i]`.
 * Requests take a random few ms, so lanes really interleave.
 */
function service(bad: (e: WireJson) => boolean, namesIndexes = true) {
  const stored: WireJson[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const send = async (events: WireJson[]) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, Math.random() * 4));
    inFlight--;
    const issues = events.flatMap((e, i) =>
      bad(e) ? [{ path: namesIndexes ? `[${i}].session_id` : '', message: 'session ended' }] : [],
    );
    if (issues.length > 0) throw new Refused({ status: 409, message: 'conflict', issues });
    stored.push(...events);
    return { accepted: events.length, duplicates: 0 };
  };
  return { stored, send, max: () => maxInFlight };
}

/** Users as the service keeps them: an identify makes its id, an alias needs its previous_id. */
function usersService() {
  const known = new Set<string>();
  const stored: string[] = [];
  const send = async (events: WireJson[]) => {
    const issues = events.flatMap((e, i) =>
      e.type === 'alias' && !known.has(String(e.previous_id))
        ? [{ path: `[${i}].previous_id`, message: `no user has the id "${e.previous_id}"` }]
        : [],
    );
    if (issues.length > 0) throw new Refused({ status: 409, message: 'conflict', issues });
    for (const e of events) {
      known.add(String(e.type === 'alias' ? e.id : e.user_id));
      stored.push(String(e.event_id));
    }
    return { accepted: events.length, duplicates: 0 };
  };
  return { send, stored };
}

function delivery(
  send: (events: WireJson[]) => Promise<{ accepted: number; duplicates: number }>,
  batchSize = 3,
  concurrency = 4,
) {
  const settled: Array<{ id: unknown; refusal: string | undefined }> = [];
  const d = new Delivery({
    batchSize,
    concurrency,
    send,
    settled: (e, refusal) => settled.push({ id: e.event.event_id, refusal }),
    onAck: () => undefined,
    onBatch: () => undefined,
    refusal: (error) => (error instanceof Refused ? error.refusal : undefined),
  });
  return { d, settled };
}

describe('Delivery', () => {
  it('keeps the events of each session in order while lanes send concurrently', async () => {
    const s = service(() => false);
    const { d, settled } = delivery(s.send, 3, 4);
    const sessions = Array.from({ length: 12 }, (_, i) => `s${i}`);
    for (let n = 0; n < 40; n++) for (const session of sessions) d.push(ev(session, n));
    await d.drain();
    expect(settled).toHaveLength(480);
    expect(s.max()).toBeGreaterThan(1);
    expect(s.max()).toBeLessThanOrEqual(4);
    for (const session of sessions) {
      const order = s.stored.filter((e) => e.session_id === session).map((e) => e.n);
      expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
    }
  });

  it('isolates refused events by the indexes the service names; the rest of the batch is stored', async () => {
    const s = service((e) => e.n === 4 || e.n === 7);
    const { d, settled } = delivery(s.send, 10, 1);
    for (let n = 0; n < 10; n++) d.push(ev('s', n));
    await d.drain();
    expect(s.stored.map((e) => e.n)).toEqual([0, 1, 2, 3, 5, 6, 8, 9]);
    expect(settled.filter((x) => x.refusal).map((x) => [x.id, x.refusal])).toEqual([
      ['s-4', 'refused by the service (409): session_id: session ended'],
      ['s-7', 'refused by the service (409): session_id: session ended'],
    ]);
  });

  it('bisects a refused batch whose issues name no index', async () => {
    const s = service((e) => e.n === 5, false);
    const { d, settled } = delivery(s.send, 8, 1);
    for (let n = 0; n < 8; n++) d.push(ev('s', n));
    await d.drain();
    expect(s.stored.map((e) => e.n)).toEqual([0, 1, 2, 3, 4, 6, 7]);
    expect(settled.filter((x) => x.refusal).map((x) => x.id)).toEqual(['s-5']);
  });

  it('stops on a failure that is not a refusal, and says so to everyone waiting', async () => {
    let calls = 0;
    const { d } = delivery(
      async () => {
        calls++;
        throw new Error('service unavailable');
      },
      2,
      2,
    );
    for (let n = 0; n < 6; n++) d.push(ev(`s${n}`, n));
    await expect(d.drain()).rejects.toThrow('service unavailable');
    await expect(d.room()).rejects.toThrow('service unavailable');
    expect(calls).toBeLessThanOrEqual(2);
  });

  it('ends each batch where a session ends, cutting only sessions longer than half a batch', async () => {
    // Sessions emitted whole, one after another, as the sessionizer emits them.
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const sizes = Array.from({ length: 300 }, () => 1 + Math.floor(next() * 14));
    const batches: WireJson[][] = [];
    const s = service(() => false);
    const { d } = delivery(
      (events) => {
        batches.push(events);
        return s.send(events);
      },
      8,
      3,
    );
    let n = 0;
    sizes.forEach((size, i) => {
      for (let k = 0; k < size; k++) d.push(ev(`s${i}`, n++));
    });
    await d.drain();
    expect(s.stored).toHaveLength(n);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(8);
    const batchesOf = new Map<unknown, Set<number>>();
    batches.forEach((batch, b) => {
      for (const e of batch) batchesOf.set(e.session_id, (batchesOf.get(e.session_id) ?? new Set()).add(b));
    });
    const cut = sizes.flatMap((size, i) => ((batchesOf.get(`s${i}`)?.size ?? 0) > 1 ? [size] : []));
    // Only a session of more than half a batch is ever cut; such sessions are common here.
    expect(cut.every((size) => size > 4)).toBe(true);
    expect(cut.length).toBeLessThan(sizes.filter((size) => size > 4).length);
    // Batches stay at least half full: only a lane's last one, sent by the drain, may be smaller.
    const lastOfLane = new Map<number, number>();
    batches.forEach((batch, b) => {
      lastOfLane.set(laneOf(String(batch[0]?.session_id), 3), b);
    });
    const last = new Set(lastOfLane.values());
    expect(batches.filter((batch, b) => !last.has(b) && batch.length < 4)).toEqual([]);
  });

  it('sends only the whole sessions of an idle lane, the growing one at the end', async () => {
    const s = service(() => false);
    const { d } = delivery(s.send, 10, 1);
    for (let k = 0; k < 3; k++) d.push(ev('a', k));
    for (let k = 3; k < 5; k++) d.push(ev('b', k));
    d.flushIdle();
    await new Promise((r) => setTimeout(r, 20));
    expect(s.stored.map((e) => e.session_id)).toEqual(['a', 'a', 'a']);
    d.push(ev('b', 5));
    await d.drain();
    expect(s.stored.map((e) => e.n)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('sends events of no session (identify, alias) from an idle lane at once', async () => {
    const s = service(() => false);
    const { d } = delivery(s.send, 10, 1);
    const identify = (n: number): OutEvent => ({
      ...ev('-', n),
      event: { type: 'identify', event_id: `i${n}`, n },
    });
    d.push(identify(0));
    d.push(identify(1));
    d.flushIdle();
    await new Promise((r) => setTimeout(r, 20));
    expect(s.stored.map((e) => e.event_id)).toEqual(['i0', 'i1']);
    await d.drain();
  });

  it('sends an alias refused for an unknown previous_id again once the records after it are stored', async () => {
    const { send, stored } = usersService();
    const { d, settled } = delivery(send, 10, 1);
    const record = (event: WireJson, n: number): OutEvent => ({ ...ev('-', n), event });
    // As a sort by content may leave them: the chain's last link first, the identify last.
    d.push(record({ type: 'alias', event_id: 'c-d', previous_id: 'c', id: 'd' }, 0));
    d.push(record({ type: 'alias', event_id: 'b-c', previous_id: 'b', id: 'c' }, 1));
    d.push(record({ type: 'alias', event_id: 'x-y', previous_id: 'x', id: 'y' }, 2));
    d.push(record({ type: 'alias', event_id: 'a-b', previous_id: 'a', id: 'b' }, 3));
    d.push(record({ type: 'identify', event_id: 'a', user_id: 'a' }, 4));
    expect(await d.drain()).toBe(true);
    expect(stored).toEqual(['a', 'a-b', 'b-c', 'c-d']);
    // Nothing makes x: refused once, with the service's reason, and every record settled once.
    expect(settled.filter((x) => x.refusal)).toEqual([
      { id: 'x-y', refusal: 'refused by the service (409): previous_id: no user has the id "x"' },
    ]);
    expect(settled.map((x) => x.id).sort()).toEqual(['a', 'a-b', 'b-c', 'c-d', 'x-y']);
  });

  // A session's own identify is sent with its session, after the identities' drain: an alias of the
  // id only it makes was refused there, where one run of the app's order stored it (found by probing).
  it('keeps an alias refused at the identities drain for the final one, after the sessions', async () => {
    const { send, stored } = usersService();
    const { d, settled } = delivery(send, 10, 2);
    const record = (event: WireJson, n: number, lane = '-'): OutEvent => ({ ...ev(lane, n), event });
    d.push(record({ type: 'alias', event_id: 'carol-x', previous_id: 'carol', id: 'carol@x' }, 0));
    d.push(record({ type: 'alias', event_id: 'nobody-y', previous_id: 'nobody', id: 'y' }, 1));
    expect(await d.drain(false)).toBe(true);
    expect(stored).toEqual([]);
    expect(settled).toEqual([]);
    // The session's identify, in its own lane.
    d.push(record({ type: 'identify', event_id: 'carol', user_id: 'carol', session_id: 's1' }, 2, 's1'));
    expect(await d.drain()).toBe(true);
    expect(stored).toEqual(['carol', 'carol-x']);
    expect(settled.filter((x) => x.refusal).map((x) => x.id)).toEqual(['nobody-y']);
    expect(settled.map((x) => x.id).sort()).toEqual(['carol', 'carol-x', 'nobody-y']);
  });

  it('does not count the aliases it keeps for the final drain as events waiting in a lane', async () => {
    const send = async (events: WireJson[]) => {
      const issues = events.flatMap((e, i) =>
        e.type === 'alias' ? [{ path: `[${i}].previous_id`, message: 'no user has the id' }] : [],
      );
      if (issues.length > 0) throw new Refused({ status: 409, message: 'conflict', issues });
      return { accepted: events.length, duplicates: 0 };
    };
    // Full at 2 × 3 batches of 1 lane: 6 events.
    const { d, settled } = delivery(send, 2, 1);
    for (let i = 0; i < 10; i++)
      d.push({
        ...ev('-', i),
        event: { type: 'alias', event_id: `a${i}`, previous_id: `p${i}`, id: `n${i}` },
      });
    expect(await d.drain(false)).toBe(true);
    expect(d.full).toBe(false);
    // A producer waiting for room would have waited for good.
    await d.room();
    for (let i = 0; i < 4; i++) d.push(ev('s', 10 + i));
    expect(await d.drain()).toBe(true);
    expect(settled.filter((x) => x.refusal).length).toBe(10);
    expect(settled.length).toBe(14);
  });

  it('ends a batch at its size in JSON as at its count, and holds back the producer by size too', async () => {
    const batches: number[] = [];
    const d = new Delivery({
      batchSize: 2_000,
      batchBytes: 4_000,
      concurrency: 1,
      send: async (events) => {
        batches.push(events.length);
        return { accepted: events.length, duplicates: 0 };
      },
      settled: () => undefined,
      onAck: () => undefined,
      onBatch: () => undefined,
      refusal: () => undefined,
    });
    // Sessions of 3 events of 1,000 bytes: a batch ends where a session does once 4,000 are reached,
    // and one session alone past the bound is cut where it is full.
    for (let i = 0; i < 9; i++) d.push({ ...ev(`s${Math.floor(i / 3)}`, i), bytes: 1_000 });
    expect(d.full).toBe(false);
    for (let i = 0; i < 6; i++) d.push({ ...ev('long', 100 + i), bytes: 1_000 });
    expect(await d.drain()).toBe(true);
    expect(batches).toEqual([3, 3, 3, 4, 2]);
    const full = new Delivery({
      ...{ batchSize: 2_000, batchBytes: 4_000, concurrency: 1 },
      send: () => new Promise(() => undefined),
      settled: () => undefined,
      onAck: () => undefined,
      onBatch: () => undefined,
      refusal: () => undefined,
    });
    for (let i = 0; i < 12; i++) full.push({ ...ev(`t${i}`, i), bytes: 1_000 });
    expect(full.full).toBe(true);
  });

  it('routes a key to the same lane every time', () => {
    expect(laneOf('session-42', 4)).toBe(laneOf('session-42', 4));
    const lanes = new Set(Array.from({ length: 100 }, (_, i) => laneOf(`s${i}`, 4)));
    expect(lanes.size).toBe(4);
  });
});
