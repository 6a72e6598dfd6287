import { describe, expect, it } from 'vitest';
import { all, any, Params, Query } from './sql.js';

describe('Params', () => {
  it('binds each distinct value once and keeps types apart', () => {
    const p = new Params();
    expect([p.bind('a'), p.bind('a'), p.bind(true), p.bind('true')]).toEqual(['$1', '$1', '$2', '$3']);
    expect(p.values).toEqual(['a', true, 'true']);
  });

  it('sends numbers as text cast to DOUBLE so no integer range can overflow', () => {
    const p = new Params();
    expect(p.number(1e21)).toBe('$1::DOUBLE');
    expect(p.values).toEqual(['1e+21']);
  });

  it('turns any property name into one JSON pointer key, escaping ~ and /', () => {
    const p = new Params();
    p.pointer('a.b');
    p.pointer('s/l');
    p.pointer('t~0');
    p.pointer('q"x');
    expect(p.values).toEqual(['/a.b', '/s~1l', '/t~00', '/q"x']);
  });
});

describe('Query', () => {
  it('emits CTEs once, in the order they were added', () => {
    const q = new Query();
    q.cte('a', 'SELECT 1');
    q.cte('b', () => 'SELECT 2');
    q.cte('a', 'SELECT 3');
    expect(q.fresh('x')).not.toBe(q.fresh('x'));
    expect(q.sql('SELECT * FROM b')).toBe('WITH a AS (SELECT 1),\nb AS (SELECT 2)\nSELECT * FROM b');
  });

  it('joins conditions, an empty list being neutral', () => {
    expect(all([])).toBe('TRUE');
    expect(any([])).toBe('FALSE');
    expect(all(['x', 'y OR z'])).toBe('(x) AND (y OR z)');
  });
});
