import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * cli.md: `-v/--verbose` shows requests and retries on stderr. A real `cas serve` behind a proxy that
 * answers the first request 503 (Retry-After: 0) and forwards the rest.
 */
const dir = tempDir('cas-verbose-');
let serve: Awaited<ReturnType<typeof startServe>> | undefined;
let proxy: Server | undefined;
let proxyUrl = '';

beforeAll(async () => {
  serve = await startServe(['--data-dir', join(dir.path, 'served'), '--api-key', 'K', '--project', 'P']);
  const upstream = serve.info.url;
  let seen = 0;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (++seen === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify({ status: 503, code: 'unavailable', message: 'warming up' }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host') headers[k] = v;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${upstream}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body ? { body } : {}),
      })
        .then(async (answer) => {
          res.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'text/plain',
          });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy?.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  if (serve) await stopChild(serve.child);
  dir.cleanup();
});

const remote = (extra: string[]) =>
  runCli(['events', '--endpoint', proxyUrl, '--api-key', 'K', '--project', 'P', '--json', ...extra]);

describe('-v / --verbose', () => {
  it('shows each request with its status and time, and each retry with its reason', async () => {
    const result = await remote(['-v']);
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(/^cas: GET \/bc\/v1\/\S+ → 503 in \d+ ms: warming up\b/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^cas: retrying GET \/bc\/v1\/\S+ in 0\.\d s \(attempt 1 failed: HTTP 503: warming up\b.*\)$/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^cas: GET \/bc\/v1\/\S+ → 200 in \d+ ms \(attempt 2\)$/),
    );
    // The API key travels in a header and is never shown.
    expect(result.stderr).not.toContain('Bearer');
    // Without -v the same exchange (this time answered at once) says nothing on stderr.
    const quiet = await remote([]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toMatch(/^cas: (GET|retrying)/m);
    expect(JSON.parse(quiet.stdout)).toEqual(JSON.parse(result.stdout));
  }, 60_000);

  it('adds no stack trace to a usage error or a refusal (only to an unexpected error, exit 1)', async () => {
    const [usage, refused] = await Promise.all([
      runCli(['users', 'list', '--limit', 'many', '--data-dir', join(dir.path, 'usage'), '-v']),
      runCli(['users', 'show', 'nobody', '--endpoint', proxyUrl, '--api-key', 'K', '--project', 'P', '-v']),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^cas: --limit must be a whole number/);
    expect(refused.code).toBe(4);
    for (const run of [usage, refused]) expect(run.stderr).not.toMatch(/^\s+at /m);
  }, 60_000);

  it("shows an import's batches to the embedded service, reached in-process", async () => {
    const file = join(dir.path, 'turns.csv');
    writeFileSync(
      file,
      'timestamp,session_id,user_id,user,assistant\n2025-01-01T00:00:00Z,s1,u1,hi,hello\n2025-01-01T00:01:00Z,s1,u1,bye,ok\n',
    );
    const result = await runCli([
      'import',
      file,
      '--kind',
      'turn',
      '--data-dir',
      join(dir.path, 'own'),
      '--json',
      '-v',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^cas: POST \/bc\/v1\/events\/queue → 200 in \d+ ms$/m);
  }, 60_000);
});
