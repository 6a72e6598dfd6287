import { describe, expect, it } from 'vitest';
import { openRaw, within } from './helpers/raw-http.js';
import { serveForFile } from './helpers/serve-file.js';

/**
 * Requests written back to back on one connection (HTTP/1.1 pipelining), against a real `cas serve`:
 * each answer belongs to its request, and a request the server will not answer is not done either
 * (found by probing: it was stored, unanswered, or answered with the next request's 400).
 */
const KEY = 'pipelining-key';
const PROJECT = 'pipelining-project';
const serve = serveForFile(KEY, PROJECT, ['--auth-failure-burst', '1000']);

function post(body: string, close = false): string {
  return (
    `POST /bc/v1/events/queue HTTP/1.1\r\nHost: cas\r\nAuthorization: Bearer ${KEY}\r\nX-App-ID: ${PROJECT}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `${close ? 'Connection: close\r\n' : ''}\r\n${body}`
  );
}

/** An event without an id: stored once per send, so a request run but not answered is stored twice by its retry. */
const track = (tag: string) =>
  `[{"type":"track","event":"Pipelined","session_id":"pipe-${tag}","user_id":"u-${tag}","timestamp":"2025-05-01T10:00:00Z"}]`;

/** The statuses of the answers a connection got, in order, once the server ended it. */
async function exchange(bytes: string): Promise<number[]> {
  const c = await openRaw(serve.url);
  await c.write(bytes);
  const outcome = await within(c.ended, 10_000, undefined);
  c.socket.destroy();
  if (!outcome) throw new Error('the server did not end the connection within 10 s');
  return [...outcome.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
}

async function stored(tag: string): Promise<number> {
  const res = await fetch(
    `${serve.url}/bc/v1/live-events/events?start=2025-01-01&end=2026-01-01&limit=10000&session_id=pipe-${tag}`,
    { headers: { authorization: `Bearer ${KEY}`, 'x-app-id': PROJECT } },
  );
  expect(res.status).toBe(200);
  const events = (await res.json()) as Array<{ event: string }>;
  return events.filter((e) => e.event === 'Pipelined').length;
}

describe('pipelined requests', () => {
  it('answers each request of a connection in order', async () => {
    expect(await exchange(post(track('a1')) + post(track('a2')) + post(track('a3'), true))).toEqual([
      200, 200, 200,
    ]);
    expect([await stored('a1'), await stored('a2'), await stored('a3')]).toEqual([1, 1, 1]);
  });

  it('does not run a request after an answer that closes the connection', async () => {
    // A body that is not JSON is refused and the connection closed (fastify's rule for body refusals).
    expect(await exchange(post('{bad') + post(track('b1'), true))).toEqual([400]);
    // Ingest is first in, first out: once a later request is answered, b1 would have been stored.
    expect(await exchange(post(track('b2'), true))).toEqual([200]);
    expect([await stored('b1'), await stored('b2')]).toEqual([0, 1]);
  });

  it("answers a malformed request after the answer owed to the one before it, not as that one's", async () => {
    expect(await exchange(`${post(track('c1'))}GARBAGE\r\n\r\n`)).toEqual([200, 400]);
    expect(await stored('c1')).toBe(1);
    // A request line over Node's limit, likewise (431).
    expect(await exchange(`${post(track('c2'))}GET /${'x'.repeat(20_000)} HTTP/1.1\r\n\r\n`)).toEqual([
      200, 431,
    ]);
    expect(await stored('c2')).toBe(1);
  });
});
