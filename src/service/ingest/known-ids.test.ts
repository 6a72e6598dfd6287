import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashId, KnownIds } from './known-ids.js';

describe('KnownIds', () => {
  it('has every id added, across growth, and counts each once', () => {
    const known = new KnownIds(4);
    for (let i = 0; i < 50_000; i++) known.add(`ev-${i}`);
    known.add('ev-7');
    expect(known.size).toBe(50_000);
    for (let i = 0; i < 50_000; i += 997) expect(known.has(`ev-${i}`)).toBe(true);
  });

  it('fills up to 3/4 of its slots before it doubles', () => {
    const known = new KnownIds();
    for (let i = 0; i < 3072; i++) known.add(`fill-${i}`);
    expect(known.capacity).toBe(4096);
    known.add('fill-one-more');
    expect(known.capacity).toBe(8192);
    expect(new KnownIds(3000).capacity).toBe(4096);
  });

  it('says no for ids never added (no false positive in 100k probes)', () => {
    const known = new KnownIds();
    for (let i = 0; i < 100_000; i++) known.add(`session-${i}`);
    let hits = 0;
    for (let i = 0; i < 100_000; i++) if (known.has(`other-${i}`)) hits++;
    expect(hits).toBe(0);
  });

  it('hashes to a non-zero integer below 2^53 that differs for near-identical ids', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const h = hashId(s);
        return Number.isSafeInteger(h) && h > 0;
      }),
    );
    expect(hashId('a/1')).not.toBe(hashId('a/2'));
    expect(hashId('')).not.toBe(hashId('\u0000'));
  });

  it('hashes as stores written before hold it (events.id_hash is this hash: a change needs a migration)', () => {
    // Values a store keeps on disk: if hashId changed, a filter loaded from them would miss every id
    // stored before, and their re-sent events would be stored twice.
    expect(hashId('')).toBe(1732443940098);
    expect(hashId('imp2-abc')).toBe(1641438921372819);
    expect(hashId('é€😀')).toBe(4595086942151300);
  });

  it('takes an id by its hash as it takes the id itself', () => {
    const known = new KnownIds();
    known.addHash(hashId('by-hash'));
    known.add('by-hash');
    expect(known.size).toBe(1);
    expect(known.has('by-hash')).toBe(true);
  });
});
