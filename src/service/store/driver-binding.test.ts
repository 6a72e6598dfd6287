import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * store/append.ts fills vectors through `@duckdb/node-bindings`, on data chunks that
 * `@duckdb/node-api` created through its own copy of it. The two must be one module: a second copy
 * (node-api upgraded alone, its binding nested under it) would load DuckDB's native library twice
 * and hand one library's chunks to the other.
 */
describe('the DuckDB binding the store uses', () => {
  it('is the very binding @duckdb/node-api loads, at the version package.json pins', () => {
    const ours = createRequire(import.meta.url);
    const nodeApi = createRequire(ours.resolve('@duckdb/node-api'));
    expect(ours.resolve('@duckdb/node-bindings')).toBe(nodeApi.resolve('@duckdb/node-bindings'));
    const pkg = ours('../../../package.json') as { dependencies: Record<string, string> };
    const apiPkg = nodeApi('../package.json') as { dependencies: Record<string, string> };
    expect(pkg.dependencies['@duckdb/node-bindings']).toBe(apiPkg.dependencies['@duckdb/node-bindings']);
  });
});
