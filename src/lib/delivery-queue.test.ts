import { describe, expect, it } from 'vitest';
import { HttpError, NetworkError } from '../client/errors.js';
import { DeliveryQueue, QueueBudget } from './delivery-queue.js';
import type { ServiceError } from './errors.js';
import type { WireObject } from './wire.js';

const target = { method: 'POST', path: '/bc/v1/events/queue' };
const ev = (n: number): WireObject => ({ event_id: `e${n}`, type: 'track', event: 'E', session_id: 's', n });

/**
 * The service's queue contract, in process: all or nothing, refusals naming `[i]`, each request a
 * few ms (so calls made while one is in flight pile up into the next batch).
 */
function service(refuse: (e: WireObject) => string | undefined = () => undefined, namesIndexes = true) {
  const stored: WireObject[] = [];
  const batches: string[][] = [];
  const send = async (events: readonly WireObject[]) => {
    batches.push(events.map((e) => e.event_id));
    await new Promise((r) => setTimeout(r, 2));
    const issues = events.flatMap((e, i) => {
      const why = refuse(e);
      return why ? [{ path: namesIndexes ? `[${i}].conversation_id` : '', message: why }] : [];
    });
    if (issues.length > 0) throw new HttpError({ status: 409, message: 'conflict', issues }, target);
    stored.push(...events);
  };
  return { stored, batches, send };
}

function queue(send: (events: readonly WireObject[]) => Promise<void>, max = 100, batchEvents = 500) {
  const errors: Array<{ error: ServiceError; id: string }> = [];
  const budget = new QueueBudget(max);
  const q = new DeliveryQueue({
    send,
    budget,
    batch: { events: batchEvents, bytes: 1024 * 1024 },
    onError: (error, event) => errors.push({ error, id: event.event_id }),
  });
  return { q, errors, budget };
}

describe('DeliveryQueue', () => {
  it('sends in call order, batching what piles up while a request is in flight', async () => {
    const s = service();
    const { q, budget } = queue(s.send);
    for (let i = 0; i < 5; i++) q.enqueue(ev(i));
    await new Promise((r) => setTimeout(r, 1));
    for (let i = 5; i < 30; i++) q.enqueue(ev(i));
    await q.drained();
    expect(s.stored.map((e) => e.n)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(s.batches.length).toBeGreaterThan(1);
    expect(s.batches.length).toBeLessThan(30);
    expect(s.batches[0]).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
    expect(budget.used).toBe(0);
    expect(q.pending).toBe(0);
  });

  it('keeps batches within the event limit', async () => {
    const s = service();
    const { q } = queue(s.send, 100, 4);
    for (let i = 0; i < 10; i++) q.enqueue(ev(i));
    await q.drained();
    expect(s.batches.map((b) => b.length)).toEqual([4, 4, 2]);
  });

  it('drained() waits only for what was enqueued before it', async () => {
    const s = service();
    const { q } = queue(s.send);
    q.enqueue(ev(0));
    const first = q.drained();
    q.enqueue(ev(1));
    await first;
    expect(s.stored.map((e) => e.event_id)).toContain('e0');
    await q.drained();
    expect(s.stored.map((e) => e.event_id)).toEqual(['e0', 'e1']);
    await expect(q.drained()).resolves.toBeUndefined();
  });

  it.each([true, false])(
    'a refused event is an error of its own; the rest of its batch is stored, in order (issues name indexes: %s)',
    async (namesIndexes) => {
      const s = service(
        (e) => (e.n === 3 || e.n === 7 ? 'conversation "c" is closed' : undefined),
        namesIndexes,
      );
      const { q, errors } = queue(s.send);
      for (let i = 0; i < 10; i++) q.enqueue(ev(i));
      await q.drained();
      expect(s.stored.map((e) => e.n)).toEqual([0, 1, 2, 4, 5, 6, 8, 9]);
      expect(errors.map((e) => e.id)).toEqual(['e3', 'e7']);
      for (const { error } of errors) {
        expect(error).toEqual({ errored: true, status: 409, message: expect.any(String) });
        expect(error.message).toMatch(/^E \(event_id e[37]\) not stored: .*conversation "c" is closed/);
      }
    },
  );

  it('an unreachable service makes every event of the batch an error with status -1', async () => {
    const { q, errors } = queue(async () => {
      throw new NetworkError('cannot reach http://127.0.0.1:9: ECONNREFUSED', 'ECONNREFUSED', target, null);
    });
    q.enqueue(ev(0));
    q.enqueue(ev(1));
    await q.drained();
    expect(errors.map((e) => [e.id, e.error.status])).toEqual([
      ['e0', -1],
      ['e1', -1],
    ]);
    expect(errors[0]?.error.message).toMatch(/ECONNREFUSED/);
  });

  it('past its bound, drops the event and reports it instead of growing or blocking', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const sent: string[] = [];
    const { q, errors, budget } = queue(async (events) => {
      await gate;
      sent.push(...events.map((e) => e.event_id));
    }, 3);
    for (let i = 0; i < 5; i++) q.enqueue(ev(i));
    expect(budget.used).toBe(3);
    expect(errors.map((e) => [e.id, e.error.status])).toEqual([
      ['e3', -1],
      ['e4', -1],
    ]);
    expect(errors[0]?.error.message).toMatch(/dropped: 3 events are waiting/);
    release();
    await q.drained();
    expect(sent).toEqual(['e0', 'e1', 'e2']);
    expect(budget.used).toBe(0);
  });
});
