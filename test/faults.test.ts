import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAS_BIN, cleanEnv, runCli, startServe, stopChild } from './helpers/cli.js';
import { startControlledProxy } from './helpers/held-proxy.js';
import { countAt, countInDataDir, writeTurnsCsv } from './helpers/import.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * Delivery faults (issue 7): each scenario ends with the same stored rows as an undisturbed import
 * of the same file into a fresh data directory — nothing lost, nothing twice.
 */
const dir = tempDir('cas-faults-');
const file = join(dir.path, 'turns.csv');
const RECORDS = 6_000;
let expected = 0;

beforeAll(async () => {
  await writeTurnsCsv(file, RECORDS);
  const clean = join(dir.path, 'clean');
  expect((await runCli(['import', file, '--kind', 'turn', '--data-dir', clean])).code).toBe(0);
  expected = await countInDataDir(clean);
  expect(expected).toBeGreaterThan(RECORDS);
}, 300_000);
afterAll(() => dir.cleanup());

const creds = ['--api-key', 'K', '--project', 'P'];
const importVia = (endpoint: string, extra: string[] = []) =>
  runCli([
    'import',
    file,
    '--kind',
    'turn',
    '--endpoint',
    endpoint,
    ...creds,
    '--data-dir',
    join(dir.path, 'cp'),
    '--restart',
    '--batch-size',
    '200',
    ...extra,
  ]);

describe('delivery faults', () => {
  it('survives the service being killed and restarted mid-import', async () => {
    const data = join(dir.path, 'restarted');
    let serve = await startServe(['--data-dir', data, ...creds]);
    const port = new URL(serve.info.url).port;
    // Default retry flags: the five attempts' backoff (at least 7.5 s in all) outlasts the restart.
    const running = importVia(serve.info.url);
    // Let some batches land, then kill the service hard and bring it back on the same port.
    for (let i = 0; i < 200 && (await countAt(serve.info.url, 'K', 'P')) < 1_000; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await stopChild(serve.child, 'SIGKILL');
    serve = await startServe(['--data-dir', data, ...creds, '--port', port]);
    const result = await running;
    expect(result.code).toBe(0);
    expect(await countAt(serve.info.url, 'K', 'P')).toBe(expected);
    await stopChild(serve.child);
  }, 300_000);

  it('survives a throttled service whose answers sometimes arrive after the client gave up', async () => {
    const serve = await startServe(['--data-dir', join(dir.path, 'slow'), ...creds]);
    // Every third answer, four times, takes 4 s against a 2 s timeout: the service has committed the
    // batch, the client times out and sends it again, and the service acknowledges the repeat as
    // duplicates. (The margins are wide so that ordinary answers on a loaded CI machine never look
    // slow; delaying every third answer to the end cost ~45 s of waiting and proved nothing more.)
    const proxy = await startControlledProxy(serve.info.url, {
      delayMs: 4_000,
      slowEvery: 3,
      slowAtMost: 4,
    });
    try {
      const result = await importVia(proxy.url, ['--timeout', '2000', '--retries', '8', '--json']);
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout) as { retries: number; duplicates: number };
      expect(summary.retries).toBeGreaterThan(0);
      expect(summary.duplicates).toBeGreaterThan(0);
      expect(await countAt(serve.info.url, 'K', 'P')).toBe(expected);
    } finally {
      await proxy.close();
      await stopChild(serve.child);
    }
  }, 300_000);

  it('stores exactly once when the CLI is killed between a send and its acknowledgement', async () => {
    const serve = await startServe(['--data-dir', join(dir.path, 'held'), ...creds]);
    const proxy = await startControlledProxy(serve.info.url, { holdFrom: 5 });
    let child: ChildProcess | undefined;
    try {
      child = spawnTracked(
        process.execPath,
        [
          CAS_BIN,
          'import',
          file,
          '--kind',
          'turn',
          '--endpoint',
          proxy.url,
          ...creds,
          '--data-dir',
          join(dir.path, 'cp2'),
          '--batch-size',
          '200',
        ],
        { env: cleanEnv(), stdio: 'ignore' },
      );
      // Wait until the service has committed batches whose acknowledgements the proxy is holding back.
      while (proxy.forwarded < 8) await new Promise((resolve) => setTimeout(resolve, 25));
      await stopChild(child, 'SIGKILL');
      const resumed = await runCli([
        'import',
        file,
        '--kind',
        'turn',
        '--endpoint',
        serve.info.url,
        ...creds,
        '--data-dir',
        join(dir.path, 'cp2'),
        '--json',
      ]);
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout).duplicates).toBeGreaterThan(0);
      expect(await countAt(serve.info.url, 'K', 'P')).toBe(expected);
    } finally {
      child?.kill('SIGKILL');
      await proxy.close();
      await stopChild(serve.child);
    }
  }, 300_000);
});
