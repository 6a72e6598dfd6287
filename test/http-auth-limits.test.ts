import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15, item 6 (authentication): failed authentication is limited per client address (it used to
 * take 20,000 guesses in 3.5 s), and an empty Bearer key is "no credentials" (401), not a wrong key.
 * A real `cas serve` with a small failure budget; the second address is 127.0.0.2 (loopback on Linux).
 */
const KEY = 'auth-key';
const PROJECT = 'auth-project';
const BURST = 5;

const dir = tempDir();
let child: ChildProcess | undefined;
let url = '';
/** The other client address; undici ignores localAddress, Node's own client honours it. */
const OTHER = '127.0.0.2';

beforeAll(async () => {
  const started = await startServe([
    ...['--data-dir', dir.path, '--api-key', KEY, '--project', PROJECT],
    ...['--auth-failure-burst', String(BURST), '--auth-failure-rate', '1'],
  ]);
  child = started.child;
  url = started.info.url;
}, 30_000);

afterAll(async () => {
  if (child) await stopChild(child, 'SIGKILL');
  dir.cleanup();
});

function identify(
  authorization: string | undefined,
  localAddress = '127.0.0.1',
): Promise<{ status: number; retryAfter: string | undefined; body: { code: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/bc/v1/user/identify`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'x-app-id': PROJECT,
          ...(authorization === undefined ? {} : { authorization }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const retryAfter = response.headers['retry-after'];
          resolve({
            status: response.statusCode ?? 0,
            retryAfter,
            body: JSON.parse(text) as { code: string },
          });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ id: 'guess' }));
  });
}

describe('authentication limits (issue 15, item 6)', () => {
  it('an empty Bearer key is 401 "missing credentials", not 403', async () => {
    for (const authorization of ['Bearer ', 'Bearer', 'bearer    ']) {
      const { status, body } = await identify(authorization, OTHER);
      expect(status, authorization).toBe(401);
      expect(body.code).toBe('unauthorized');
    }
  });

  it('a burst of wrong keys from one address ends in 429 with Retry-After, for that address only', async () => {
    // The previous test spent failures from 127.0.0.2; these guesses come from 127.0.0.1.
    const statuses: number[] = [];
    for (let i = 0; i < BURST * 4; i++) statuses.push((await identify(`Bearer guess-${i}`)).status);
    expect(statuses.slice(0, BURST)).toEqual(Array(BURST).fill(403));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(BURST * 4 - BURST - 2);

    // While limited, even the right key is refused: checking it would tell a guesser which guess won.
    const limited = await identify(`Bearer ${KEY}`);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);

    // Another address is not held back by this one's failures.
    expect((await identify(`Bearer ${KEY}`, OTHER)).status).toBe(200);

    // Once the bucket refills, the right key works again from the limited address.
    await new Promise((resolve) => setTimeout(resolve, (Number(limited.retryAfter) + 0.5) * 1000));
    expect((await identify(`Bearer ${KEY}`)).status).toBe(200);
  }, 20_000);
});
