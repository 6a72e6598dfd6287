import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/limits.js';
import { queryable, READ_POOL_DEFAULTS } from './database.js';
import {
  LeaseAbandonedError,
  QueryOutOfMemoryError,
  QueryTimeoutError,
  ReadPool,
  ReadPoolBusyError,
  type ReadPoolOptions,
} from './read-pool.js';

let instance: DuckDBInstance;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
});
afterAll(() => instance.closeSync());

async function pool(connections: number, options: Partial<ReadPoolOptions> = {}) {
  const list = [];
  for (let i = 0; i < connections; i++) list.push(await instance.connect());
  return new ReadPool(
    list,
    { timeoutMs: 5_000, queueTimeoutMs: 5_000, waitingPerTenant: 8, ...options },
    queryable,
  );
}

/** A lease that holds its connection until `release` is called. */
function hold(p: ReadPool, tenant: string, log: string[]) {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const done = p.lease(tenant, async (q) => {
    log.push(tenant);
    await q.run('SELECT 1');
    await released;
  });
  return { release: () => release(), done };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('ReadPool', () => {
  it('leaves one connection to other tenants, and serves the waiting tenant holding fewest first', async () => {
    const p = await pool(3);
    const log: string[] = [];
    const a = [hold(p, 'A', log), hold(p, 'A', log), hold(p, 'A', log), hold(p, 'A', log)];
    await tick();
    expect(log).toEqual(['A', 'A']);
    const b = hold(p, 'B', log);
    await tick();
    expect(log).toEqual(['A', 'A', 'B']);
    const b2 = hold(p, 'B', log);
    const c = hold(p, 'C', log);
    a[0]!.release();
    await tick();
    // A's waiting leases came first, but A still holds one and B one; C holds none: C goes first.
    expect(log).toEqual(['A', 'A', 'B', 'C']);
    b.release();
    await tick();
    expect(log).toEqual(['A', 'A', 'B', 'C', 'B']);
    for (const h of [...a, b2, c]) h.release();
    await Promise.all([...a, b, b2, c].map((h) => h.done));
    expect(log.filter((t) => t === 'A')).toHaveLength(4);
  });

  it('interrupts a lease past its budget, and the connection serves the next one', async () => {
    const p = await pool(1, { timeoutMs: 200 });
    const started = Date.now();
    await expect(
      p.lease('A', (q) => q.all('SELECT count(*) FROM range(10000000000) a, range(1000) b')),
    ).rejects.toBeInstanceOf(QueryTimeoutError);
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(p.lease('A', (q) => q.one<{ x: number }>('SELECT 42 AS x'))).resolves.toEqual({ x: 42 });
  });

  it('refuses a tenant with too many waiting, and a lease that waits past the queue timeout', async () => {
    const p = await pool(1, { waitingPerTenant: 1, queueTimeoutMs: 100 });
    const log: string[] = [];
    const held = hold(p, 'A', log);
    await tick();
    const waiting = p.lease('B', async () => 'late');
    await expect(p.lease('B', async () => 'too many')).rejects.toMatchObject({ reason: 'queue full' });
    await expect(waiting).rejects.toBeInstanceOf(ReadPoolBusyError);
    held.release();
    await held.done;
    await expect(p.lease('B', async () => 'now')).resolves.toBe('now');
  });

  // With 32, six of a burst of 40 charts were 503 "queue full" at once (found by probing).
  it('by default, lets a whole chart burst of one key wait while its readers are busy', async () => {
    const p = await pool(READ_POOL_DEFAULTS.connections, READ_POOL_DEFAULTS);
    const log: string[] = [];
    const busy = Array.from({ length: READ_POOL_DEFAULTS.connections - 1 }, () => hold(p, 'A', log));
    await tick();
    const burst = Array.from({ length: LIMITS.chartBurst }, (_, i) => p.lease('A', async () => i));
    for (const h of busy) h.release();
    await expect(Promise.all(burst)).resolves.toHaveLength(LIMITS.chartBurst);
  });

  it('stops a running lease whose caller went away, and the connection serves the next one at once', async () => {
    const p = await pool(1, { timeoutMs: 60_000 });
    const gone = new AbortController();
    const started = Date.now();
    const running = p.lease(
      'A',
      (q) => q.all('SELECT count(*) FROM range(10000000000) a, range(1000) b'),
      gone.signal,
    );
    await tick();
    gone.abort();
    await expect(running).rejects.toBeInstanceOf(LeaseAbandonedError);
    await expect(p.lease('A', (q) => q.one<{ x: number }>('SELECT 42 AS x'))).resolves.toEqual({ x: 42 });
    // Far short of the 60 s budget that would otherwise have freed the connection.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('takes a waiting lease whose caller went away out of the queue, and never runs it', async () => {
    const p = await pool(1);
    const log: string[] = [];
    const held = hold(p, 'A', log);
    await tick();
    const gone = new AbortController();
    let ran = false;
    const abandoned = p.lease(
      'B',
      async () => {
        ran = true;
      },
      gone.signal,
    );
    const next = p.lease('C', async () => 'served');
    gone.abort();
    await expect(abandoned).rejects.toBeInstanceOf(LeaseAbandonedError);
    held.release();
    await expect(next).resolves.toBe('served');
    expect(ran).toBe(false);
    const before = new AbortController();
    before.abort();
    await expect(p.lease('B', async () => 'never', before.signal)).rejects.toBeInstanceOf(
      LeaseAbandonedError,
    );
  });

  // DuckDB's memory limit is the instance's: two charts that each fit alone both failed when run at
  // once, with a 400 telling their users to narrow them (found by probing).
  it('says whether a query that ran out of memory had others running beside it', async () => {
    const p = await pool(3);
    const oom = () =>
      p.lease('A', async () => {
        throw new Error('Out of Memory Error: could not allocate block of size 256.0 KiB');
      });
    const alone = await oom().catch((error: unknown) => error);
    expect(alone).toBeInstanceOf(QueryOutOfMemoryError);
    expect((alone as QueryOutOfMemoryError).crowded).toBe(false);

    const log: string[] = [];
    const other = hold(p, 'B', log);
    await tick();
    const beside = await oom().catch((error: unknown) => error);
    expect((beside as QueryOutOfMemoryError).crowded).toBe(true);
    other.release();
    await other.done;

    // One that began alone, with another started while it ran.
    let fail: () => void = () => undefined;
    const first = p.lease('A', async () => {
      await new Promise<void>((resolve) => {
        fail = resolve;
      });
      throw new Error('Out of Memory Error: failed to pin block');
    });
    await tick();
    const later = hold(p, 'B', log);
    await tick();
    later.release();
    await later.done;
    fail();
    const error = await first.catch((e: unknown) => e);
    expect((error as QueryOutOfMemoryError).crowded).toBe(true);
    // Any other failure is passed on as it is.
    await expect(p.lease('A', async () => Promise.reject(new Error('Binder Error: x')))).rejects.toThrow(
      'Binder Error: x',
    );
  });
});
