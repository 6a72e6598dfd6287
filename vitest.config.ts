import { defineConfig } from 'vitest/config';

// Node reads and parses NODE_EXTRA_CA_CERTS at every process start (~0.07 s of CPU for a system
// bundle, against ~0.03 s for all of `node -e 0`), and the suite starts ~700 processes (its workers
// and the CLI runs) that only ever speak plain HTTP on loopback. The workers inherit this process's
// environment, so it is set aside here; npm in test/pack.test.ts, which may reach the registry, gets
// it back (test/helpers/cli.ts: `npmEnv`).
const extraCa = process.env.NODE_EXTRA_CA_CERTS;
if (extraCa !== undefined) {
  process.env.CAS_TEST_NODE_EXTRA_CA_CERTS = extraCa;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // DuckDB and child processes are heavy; two cores on CI.
    maxWorkers: 2,
  },
});
