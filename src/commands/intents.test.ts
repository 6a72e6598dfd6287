import { describe, expect, it } from 'vitest';
import { intentBody } from './intents.js';
import { wholeNumber } from './users.js';

describe('intentBody', () => {
  it('reads patterns and name:description attributes', () => {
    expect(
      intentBody({
        name: 'refund',
        description: 'money back',
        pattern: ['refund', 'money back'],
        attribute: ['order_id:the order', 'reason'],
      }),
    ).toEqual({
      intent: { name: 'refund', description: 'money back' },
      attributes: [
        { name: 'order_id', description: 'the order' },
        { name: 'reason', description: '' },
      ],
      patterns: ['refund', 'money back'],
    });
  });

  it('names the flag of a bad value', () => {
    expect(() => intentBody({ name: 'x', attribute: [':no name'] })).toThrow(/--attribute/);
    expect(() => intentBody({ name: 'x', pattern: [''] })).toThrow(/--pattern/);
    expect(() => intentBody({ name: '  ' })).toThrow(/intent/);
  });
});

describe('wholeNumber', () => {
  it('takes digits within the bound and names the flag otherwise', () => {
    expect(wholeNumber(undefined, '--limit', 7, 10)).toBe(7);
    expect(wholeNumber('10', '--limit', 7, 10)).toBe(10);
    expect(() => wholeNumber('11', '--limit', 7, 10)).toThrow(/--limit/);
    expect(() => wholeNumber('-1', '--limit', 7, 10)).toThrow(/--limit/);
    expect(() => wholeNumber('1.5', '--limit', 7, 10)).toThrow(/--limit/);
  });
});
