import { describe, expect, it } from 'vitest';
import { BodyBudget } from './body-budget.js';

function status(fn: () => unknown): number | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as { status?: number }).status;
  }
}

describe('BodyBudget', () => {
  it('admits bodies up to the budget, refuses with 503 beyond it, and takes returns', () => {
    const budget = new BodyBudget(100);
    const a = budget.reserve(40, 'a');
    const b = budget.reserve(40, 'b');
    expect(status(() => budget.reserve(30, 'c'))).toBe(503);
    a();
    a(); // giving back twice gives back once
    expect(budget.inFlight).toBe(40);
    expect(status(() => budget.reserve(30, 'c'))).toBeUndefined();
    b();
  });

  it('lets one address hold at most half, so others keep the rest', () => {
    const budget = new BodyBudget(100);
    budget.reserve(30, 'slow');
    expect(status(() => budget.reserve(30, 'slow'))).toBe(503);
    expect(status(() => budget.reserve(30, 'other'))).toBeUndefined();
  });

  it('admits one body bigger than the budget when nothing else is in flight', () => {
    const budget = new BodyBudget(10);
    const release = budget.reserve(50, 'a');
    expect(status(() => budget.reserve(1, 'b'))).toBe(503);
    release();
    expect(budget.inFlight).toBe(0);
  });
});
