import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultMaxDistance, editDistance, nearestNames } from './nearest-names.js';

const RUNS = Number(process.env.CAS_PROPERTY_RUNS ?? 100);

/** Textbook Damerau-Levenshtein (optimal string alignment) by full recursion with memo: the oracle. */
function oracle(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  const memo = new Map<string, number>();
  const d = (i: number, j: number): number => {
    if (i === 0) return j;
    if (j === 0) return i;
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let best = Math.min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (s[i - 1] === t[j - 1] ? 0 : 1));
    if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
      best = Math.min(best, d(i - 2, j - 2) + 1);
    memo.set(key, best);
    return best;
  };
  return d(s.length, t.length);
}

describe('editDistance', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('Conversation Trun', 'Conversation Turn')).toBe(1);
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('agrees with the recursive definition, and is symmetric', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é'), maxLength: 7 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        expect(editDistance(a, b)).toBe(oracle(a, b));
        expect(editDistance(b, a)).toBe(editDistance(a, b));
      }),
      { numRuns: RUNS },
    );
  });
});

describe('nearestNames', () => {
  const events = [
    'Conversation Turn',
    'Conversation Started',
    'Conversation Ended',
    'Purchase',
    'Session Started',
  ];

  it('suggests the misspelled event first', () => {
    expect(nearestNames('Conversation Trun', events)[0]).toBe('Conversation Turn');
    expect(nearestNames('purchse', events)).toEqual(['Purchase']);
  });

  it('ignores case, so a name typed in another case is the nearest', () => {
    expect(nearestNames('conversation turn', events)).toEqual(['Conversation Turn']);
    expect(nearestNames('PLAN', ['plane', 'plan', 'Plan'])).toEqual(['Plan', 'plan']);
    expect(nearestNames('PLANE', ['plan', 'planet'])).toEqual(['plan', 'planet']);
  });

  it('keeps at most `limit` names within reach, nearest first, ties in code-unit order', () => {
    expect(nearestNames('modle', ['model', 'modes', 'mode', 'label', 'zzzzzz'])).toEqual([
      'mode',
      'model',
      'modes',
    ]);
    expect(nearestNames('mdel', ['modes', 'model'], { limit: 1 })).toEqual(['model']);
    expect(nearestNames('xyz', events)).toEqual([]);
    expect(nearestNames('a', ['b', 'c', 'abc'])).toEqual(['b', 'c']);
  });

  it('never suggests the name itself, nor a name twice', () => {
    expect(nearestNames('plan', ['plan', 'plans', 'plans'])).toEqual(['plans']);
  });

  it('does not depend on the order of the known names', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 6 }), { maxLength: 12 }),
        fc.string({ maxLength: 6 }),
        (names, typed) => {
          const forward = nearestNames(typed, names);
          expect(nearestNames(typed, [...names].reverse())).toEqual(forward);
          for (const found of forward) {
            expect(editDistance(typed.toLowerCase(), found.toLowerCase())).toBeLessThanOrEqual(
              defaultMaxDistance(typed),
            );
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
