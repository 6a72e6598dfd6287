import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * `npm run build` bundles the embedded service's thread into one file (scripts/bundle-worker.mjs) and
 * records V8's code cache of it, and every built command that starts the embedded service runs that
 * file through its loader (embedded-loader.ts). A bundle can break where the modules work (a
 * dependency's dynamic require, a file read beside a module), so this drives the bundle itself
 * through what an import and a chart use: the in-process queue (validation, text analysis, the ingest
 * core, DuckDB), the HTTP routes with their authentication, and a clean close. And a cache V8 refuses
 * fails nothing, it only slows every command down, so a test says whether V8 takes it.
 */
const bundle = fileURLToPath(new URL('../dist/service/embedded-worker.bundle.cjs', import.meta.url));
const loader = fileURLToPath(new URL('../dist/service/embedded-loader.js', import.meta.url));
const dir = tempDir('cas-bundle-');
afterAll(() => dir.cleanup());

type Message =
  | { ready: { url: string; apiKey: string; projectId: string } }
  | { answer: { id: number; answer: { status: number; body: Record<string, unknown> } } }
  | { failed: { message: string } }
  | { closed: true }
  | { log: string };

function next<T>(worker: Worker, pick: (m: Message) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: Message) => {
      if ('failed' in m) reject(new Error(m.failed.message));
      const value = pick(m);
      if (value === undefined) return;
      worker.off('message', onMessage);
      resolve(value);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
}

describe('the bundled embedded-service thread', () => {
  it('is built beside the entry it bundles, in strict mode as its ES modules were written', () => {
    expect(existsSync(bundle)).toBe(true);
    // The directive must come first to count: anything before it leaves the whole bundle sloppy.
    expect(readFileSync(bundle, 'utf8').slice(0, 13)).toBe('"use strict";');
  });

  it("starts with the build's code cache when run as the CLI runs it", () => {
    // A process of its own: the CLI's V8 flags (applied as main.ts applies them), no test runner's.
    const flags = new URL('../dist/shared/v8-flags.js', import.meta.url).href;
    const script = `
      import { Worker } from 'node:worker_threads';
      const { applyV8Flags } = await import(${JSON.stringify(flags)});
      applyV8Flags();
      const worker = new Worker(${JSON.stringify(loader)}, { workerData: { warm: true } });
      worker.once('message', (m) => { console.log(JSON.stringify(m)); worker.terminate(); });`;
    const file = join(dir.path, 'code-cache.mjs');
    writeFileSync(file, script);
    const run = spawnSync(process.execPath, [file], {
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ codeCache: 'accepted' });
  });

  it('starts, stores a queued conversation with its analysis, answers routes and closes', async () => {
    const worker = new Worker(loader, {
      workerData: { dataDir: join(dir.path, 'data'), memoryLimit: '128MB' },
    });
    try {
      const ready = await next(worker, (m) => ('ready' in m ? m.ready : undefined));
      const events = [
        { type: 'start_session', session_id: 'b1', user_id: 'ann', timestamp: '2025-02-01T10:00:00Z' },
        {
          type: 'track',
          event: 'Conversation Turn',
          session_id: 'b1',
          timestamp: '2025-02-01T10:00:05Z',
          properties: { user: 'I love this, please cancel my order', assistant: 'Done, cancelled.' },
        },
        { type: 'end_session', session_id: 'b1', timestamp: '2025-02-01T10:01:00Z' },
      ];
      worker.postMessage({
        queue: { id: 7, batch: { apiKey: ready.apiKey, projectId: ready.projectId, events } },
      });
      const answer = await next(worker, (m) =>
        'answer' in m && m.answer.id === 7 ? m.answer.answer : undefined,
      );
      expect(answer).toEqual({ status: 200, body: { status: 'ok', accepted: 3, duplicates: 0 } });

      const headers = { authorization: `Bearer ${ready.apiKey}`, 'x-app-id': ready.projectId };
      const stored = await fetch(
        `${ready.url}/bc/v1/db/events/find?filter=${encodeURIComponent('{"session_id":"b1"}')}`,
        {
          headers,
        },
      );
      expect(stored.status).toBe(200);
      const names = ((await stored.json()) as Array<{ event: string }>).map((e) => e.event).sort();
      // The summary exists only if the text analysis (sentiment and its word lists) ran in the bundle.
      expect(names).toEqual(expect.arrayContaining(['Conversation Summary', 'Conversation Turn']));
      const anonymous = await fetch(`${ready.url}/bc/v1/db/events/find`);
      expect(anonymous.status).toBe(401);

      worker.postMessage('close');
      await next(worker, (m) => ('closed' in m ? true : undefined));
    } finally {
      await worker.terminate();
    }
  });
});
