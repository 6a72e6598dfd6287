import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { abortable } from './abortable.js';

/** V8's gc() in a test: the flag is read when a context is made, so a new one exposes it. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function* items(n: number, made: Array<WeakRef<object>>): AsyncGenerator<{ text: string }> {
  for (let i = 0; i < n; i++) {
    const item = { text: `chunk ${i} `.repeat(1_000) };
    made.push(new WeakRef(item));
    yield item;
  }
}

describe('abortable', () => {
  it('lets go of the items it handed out (the whole input stayed in memory until the read ended)', async () => {
    const gc = collector();
    const made: Array<WeakRef<object>> = [];
    const signal = new AbortController().signal;
    let seen = 0;
    for await (const item of abortable(items(50, made), signal)) {
      seen += item.text.length > 0 ? 1 : 0;
      if (seen === 40) {
        // WeakRefs hold their targets until the current job ends.
        await macrotask();
        gc();
        // The item in hand is alive; those before it are no one's.
        expect(made.slice(0, 30).filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
      }
    }
    expect(seen).toBe(50);
  });

  it('ends a read that waits forever once the signal aborts, and closes the source when stopped early', async () => {
    const controller = new AbortController();
    let closed = false;
    async function* stalls(): AsyncGenerator<number> {
      try {
        yield 1;
        await new Promise(() => undefined);
      } finally {
        closed = true;
      }
    }
    const got: number[] = [];
    const reading = (async () => {
      for await (const n of abortable(stalls(), controller.signal)) got.push(n);
    })();
    await macrotask();
    controller.abort();
    await reading;
    expect(got).toEqual([1]);

    async function* counts(): AsyncGenerator<number> {
      try {
        for (let i = 0; ; i++) yield i;
      } finally {
        closed = true;
      }
    }
    closed = false;
    for await (const n of abortable(counts(), new AbortController().signal)) if (n === 3) break;
    expect(closed).toBe(true);
  });

  it('reads nothing once the signal has aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const made: Array<WeakRef<object>> = [];
    const got: unknown[] = [];
    for await (const item of abortable(items(5, made), controller.signal)) got.push(item);
    expect(got).toEqual([]);
    expect(made).toHaveLength(0);
  });

  it('passes a read failure on', async () => {
    async function* fails(): AsyncGenerator<number> {
      yield 1;
      throw new Error('disk gone');
    }
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const n of abortable(fails(), new AbortController().signal)) got.push(n);
      })(),
    ).rejects.toThrow('disk gone');
    expect(got).toEqual([1]);
  });
});
