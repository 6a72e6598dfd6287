import { expect } from 'vitest';

/**
 * Deep equality where numbers may differ in the last bits: SQL and the reference sum and divide in
 * different orders (means, percents). Everything else must match exactly; the failure names the path.
 */
export function expectClose(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
    if (Math.abs(actual - expected) > tolerance) expect.fail(`${path}: ${actual} != ${expected}`);
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      expect.fail(`${path}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`);
    }
    for (const [i, e] of expected.entries()) expectClose((actual as unknown[])[i], e, `${path}[${i}]`);
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      expect.fail(`${path}: not an object`);
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const keys = new Set(
      [...Object.keys(a), ...Object.keys(e)].filter((k) => a[k] !== undefined || e[k] !== undefined),
    );
    for (const k of keys) expectClose(a[k], e[k], `${path}.${k}`);
    return;
  }
  if (actual !== expected) expect.fail(`${path}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`);
}
