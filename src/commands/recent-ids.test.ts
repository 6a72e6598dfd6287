import { describe, expect, it } from 'vitest';
import { RecentIds } from './recent-ids.js';

describe('RecentIds', () => {
  it('forgets the oldest id past its capacity, and says whether an id was seen with that version', () => {
    const ids = new RecentIds(3);
    expect(['a', 'b', 'c', 'd'].map((id) => ids.add(id))).toEqual([true, true, true, true]);
    expect(['a', 'b', 'c', 'd'].map((id) => ids.has(id))).toEqual([false, true, true, true]);
    expect(ids.add('b')).toBe(false);
    expect(ids.add('b', 'changed')).toBe(true);
  });

  it('keeps past its capacity every id dated from keepFrom on, and forgets them once it passes them', () => {
    let from = 100;
    const ids = new RecentIds(3, () => from);
    for (let i = 0; i < 10; i++) ids.add(`e${i}`, '', 100 + i);
    expect(Array.from({ length: 10 }, (_, i) => ids.has(`e${i}`)).every(Boolean)).toBe(true);
    from = 105;
    ids.add('e10', '', 110);
    expect(Array.from({ length: 11 }, (_, i) => ids.has(`e${i}`))).toEqual([
      ...Array.from({ length: 5 }, () => false),
      ...Array.from({ length: 6 }, () => true),
    ]);
  });
});
