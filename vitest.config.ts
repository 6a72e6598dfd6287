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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores on CI, and a third worker: with two, the suite kept ~1.6 cores busy (its files wait
    // on timeouts, retries and child processes), 317 s of wall time; with three, ~1.9 cores and
    // 274 s, and it passed beside a process that kept one core busy (367 s). By hand, 2026-12-02.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        // The unit tests beside the code share their workers' modules: they mock nothing, stub no
        // globals and use no fake timers, and importing the modules again for each of 91 files was
        // half of their CPU (51 s against 26 s of it, 31 s against 19 s of wall time, alone).
        test: { name: 'unit', include: ['src/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        // Integration tests share their workers' modules too: importing the service's ~400 modules
        // again for each file took ~2 s of CPU a file. Each file still kills the processes it
        // started (helpers/setup.ts) and closes or removes what it opened in its own afterAll.
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          isolate: false,
          setupFiles: ['test/helpers/setup.ts'],
        },
      },
    ],
  },
});
