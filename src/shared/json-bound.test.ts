import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { surelyWithin } from './json-bound.js';

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');

describe('surelyWithin', () => {
  it('never vouches for a value larger than the limit', () => {
    // Full Unicode and lone surrogates (escaped as \udXXX, 6 bytes), control characters, numbers
    // of every magnitude, nesting.
    const unit = fc.oneof(
      fc.constantFrom('\u0001', '\n', '"', '\\', '\ud800', 'é', '😀'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const text = fc.string({ unit });
    const leaf = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
    const { tree } = fc.letrec((t) => ({
      tree: fc.oneof({ depthSize: 'small' }, leaf, fc.array(t('tree')), fc.dictionary(text, t('tree'))),
    }));
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: 4000 }), (v, limit) => {
        if (surelyWithin(v, limit)) expect(bytes(v)).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 1000 },
    );
  });

  it('never vouches too early where every count is tight: empty keys, the longest numbers, null', () => {
    const leaf = fc.constantFrom(
      null,
      true,
      false,
      '',
      -1.7976931348623157e308,
      -2.2250738585072014e-308,
      -1e21,
    );
    const { tree } = fc.letrec((t) => ({
      tree: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(t('tree')),
        fc.dictionary(fc.constant(''), t('tree'), { maxKeys: 1 }),
      ),
    }));
    fc.assert(
      fc.property(tree, fc.integer({ min: -8, max: 0 }), (v, below) => {
        const limit = bytes(v) + below;
        if (surelyWithin(v, limit)) expect(bytes(v)).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 500 },
    );
  });

  it('vouches for a chat turn well under the limit, in one walk', () => {
    const turn = JSON.parse(
      '{"type":"track","event":"Conversation Turn","session_id":"s1","properties":{"user":"hi","assistant":"hello","prompt_tokens":3}}',
    ) as unknown;
    expect(surelyWithin(turn, 6 * bytes(turn))).toBe(true);
    expect(surelyWithin(turn, bytes(turn) - 1)).toBe(false);
  });

  it('leaves forbidden keys, nested ones too, to the exact scan', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const v = JSON.parse(`{"a":[{"b":{"${key}":1}}]}`) as unknown;
      expect(surelyWithin(v, 1e6)).toBe(false);
    }
    expect(surelyWithin(JSON.parse('{"a":"__proto__"}'), 1e6)).toBe(true);
  });

  it('leaves deep nesting, values that serialize themselves and BigInts to the exact scan', () => {
    const deep = JSON.parse(`${'['.repeat(100)}1${']'.repeat(100)}`) as unknown;
    expect(surelyWithin(deep, 1e6)).toBe(false);
    expect(surelyWithin({ at: new Date(0) }, 1e6)).toBe(false);
    expect(surelyWithin({ n: 1n }, 1e6)).toBe(false);
  });
});
