import { describe, expect, it } from 'vitest';
import { Lease } from './lease.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Lease', () => {
  it('lets one holder at a time run, in the order asked, and goes on after a holder throws', async () => {
    const lease = new Lease();
    const log: string[] = [];
    let inside = 0;
    const job = (name: string, fail = false) =>
      lease.hold(async () => {
        inside++;
        expect(inside).toBe(1);
        log.push(`${name} in`);
        await tick();
        await tick();
        log.push(`${name} out`);
        inside--;
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([job('a'), job('b', true), job('c')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(log).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
  });

  it('holds callers back until a manual release', async () => {
    const lease = new Lease();
    const release = await lease.acquire();
    let ran = false;
    const waiting = lease.hold(async () => {
      ran = true;
    });
    await tick();
    expect(ran).toBe(false);
    release();
    await waiting;
    expect(ran).toBe(true);
  });
});
