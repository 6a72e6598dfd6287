import { describe, expect, it } from 'vitest';
import { installEarlySignals, releaseEarlySignals } from './early-signals.js';

describe('early signals', () => {
  it('exit 130 until released, and leave no listener behind', () => {
    const before = process.listenerCount('SIGTERM');
    const codes: number[] = [];
    installEarlySignals((code) => codes.push(code));
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    process.emit('SIGTERM', 'SIGTERM');
    expect(codes).toEqual([130]);
    releaseEarlySignals();
    expect(process.listenerCount('SIGTERM')).toBe(before);
    releaseEarlySignals();
  });
});
