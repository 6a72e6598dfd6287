import dataAccessors from '@duckdb/node-api/lib/vectors/dataAccessors.js';

/**
 * `@duckdb/node-api` decodes every VARCHAR it reads with one shared `new TextDecoder()`, whose
 * default (WHATWG's) drops a leading U+FEFF, as if it were a byte order mark. An id stored as
 * "\uFEFFe1" read back as "e1": a re-sent event never matched its stored copy and was stored again
 * each time, and users, sessions and devices were loaded under other ids and made twice (found by
 * probing). The store hands back the text it was given: the shared decoder is replaced, once, by one
 * that keeps a leading U+FEFF. `driver-strings.test.ts` fails should an upgrade of the driver move it.
 * A call, not an import for its side effect: the package declares none, so a bundler drops those.
 */
export function keepLeadingByteOrderMarks(): void {
  const accessors = dataAccessors as unknown as { textDecoder: { decode(bytes: Uint8Array): string } };
  accessors.textDecoder = KEEPING;
}

const KEEPING = new TextDecoder('utf-8', { ignoreBOM: true });
