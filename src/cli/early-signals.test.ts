import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { installEarlySignals, releaseEarlySignals } from './early-signals.js';

describe('early signals', () => {
  it('exit 130 until released, and leave no listener behind', () => {
    // Not the test process itself: its runner may listen to its signals.
    const target = new EventEmitter();
    const codes: number[] = [];
    installEarlySignals((code) => codes.push(code), target);
    expect(target.listenerCount('SIGTERM')).toBe(1);
    target.emit('SIGTERM', 'SIGTERM');
    target.emit('SIGINT', 'SIGINT');
    expect(codes).toEqual([130, 130]);
    releaseEarlySignals(target);
    expect(target.listenerCount('SIGTERM') + target.listenerCount('SIGINT')).toBe(0);
    releaseEarlySignals(target);
  });
});
