import type { EventEmitter } from 'node:events';

/**
 * SIGINT/SIGTERM before main.ts has installed its handlers: loading its bundle takes ~0.3 s, and a
 * SIGTERM then (a service manager's quick stop) ended the process with 143 and no word (found by
 * probing). Nothing has started yet, so the process says so and exits 130 at once, as main.ts would.
 * The two sides may be separate copies (launch.ts is not bundled): they meet through a global symbol.
 */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const KEY = Symbol.for('cas.early-signal-handler');
type Slot = Record<symbol, (() => void) | undefined>;

export function installEarlySignals(
  exit: (code: number) => void = (code) => process.exit(code),
  target: EventEmitter = process,
): void {
  const handler = () => {
    process.stderr.write('cas: interrupted\n');
    exit(130);
  };
  for (const signal of SIGNALS) target.on(signal, handler);
  (globalThis as unknown as Slot)[KEY] = handler;
}

/** main.ts, as its own handlers take over. */
export function releaseEarlySignals(target: EventEmitter = process): void {
  const slot = globalThis as unknown as Slot;
  const handler = slot[KEY];
  if (handler === undefined) return;
  for (const signal of SIGNALS) target.off(signal, handler);
  slot[KEY] = undefined;
}
