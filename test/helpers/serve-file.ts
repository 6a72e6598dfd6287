import { afterAll, beforeAll } from 'vitest';
import { startServe, stopChild } from './cli.js';
import { tempDir } from './temp.js';

/** The `cas serve` a test file shares: its address and process id, once beforeAll has started it. */
export interface FileServe {
  readonly url: string;
  readonly pid: number;
}

/**
 * Starts one `cas serve` for the calling test file (beforeAll) over a fresh data directory with
 * `key` and `project` provisioned and `flags` (its limits), and kills it and removes the directory
 * in afterAll, whatever the tests did.
 */
export function serveForFile(key: string, project: string, flags: readonly string[]): FileServe {
  const dir = tempDir();
  const state = { url: '', pid: 0 };
  let stop: (() => Promise<unknown>) | undefined;
  beforeAll(async () => {
    const started = await startServe([
      '--data-dir',
      dir.path,
      '--api-key',
      key,
      '--project',
      project,
      ...flags,
    ]);
    stop = () => stopChild(started.child, 'SIGKILL');
    state.url = started.info.url;
    state.pid = started.child.pid ?? 0;
  }, 30_000);
  afterAll(async () => {
    await stop?.();
    dir.cleanup();
  });
  return {
    get url() {
      return state.url;
    },
    get pid() {
      return state.pid;
    },
  };
}
