import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, stopChild } from './helpers/cli.js';
import { openRaw, processUsage, type RawConnection, within } from './helpers/raw-http.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15, denial of service 2: bodies and headers that never finish, clients that keep sending
 * after a refusal, and many connections from one address, against a real `cas serve` over real
 * sockets. Its limits are set small by flag so the test takes seconds; the margins allow a loaded
 * 2-core machine (a timeout of 2 s is asserted to have fired within 8 s). The request timeout is
 * 2 s, not less: the budget test tells bodies admitted together from bodies admitted after others
 * timed out by how far apart their timeouts fall, which needs the timeout well above a loaded
 * machine's delays.
 */
const KEY = 'slow-key';
const PROJECT = 'slow-project';
const KIB = 1024;

const dir = tempDir();
let child: ChildProcess | undefined;
let url = '';
let pid = 0;

beforeAll(async () => {
  const started = await startServe([
    ...['--data-dir', dir.path, '--api-key', KEY, '--project', PROJECT],
    ...['--headers-timeout', '400ms', '--request-timeout', '2s'],
    ...['--max-body', '512KiB', '--max-body-in-flight', '3MiB'],
    ...['--max-connections-per-address', '16', '--max-connections', '64'],
    ...['--auth-failure-burst', '1000'],
  ]);
  child = started.child;
  url = started.info.url;
  pid = child.pid ?? 0;
}, 30_000);

afterAll(async () => {
  if (child) await stopChild(child, 'SIGKILL');
  dir.cleanup();
});

const head = (length: number, auth = true) =>
  `POST /bc/v1/user/identify HTTP/1.1\r\nHost: cas\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
  (auth ? `Authorization: Bearer ${KEY}\r\nX-App-ID: ${PROJECT}\r\n` : '') +
  '\r\n';

/** A JSON body of exactly `length` bytes: {"id":"x","pad":"aaa…"}. */
const body = (length: number) => {
  const prefix = '{"id":"x","pad":"';
  return `${prefix}${'a'.repeat(length - prefix.length - 2)}"}`;
};

/** Keeps writing chunks while the server has not ended the conversation; returns the bytes written. */
async function keepSending(c: RawConnection, total: number, chunk = 16 * KIB): Promise<number> {
  let sent = 0;
  while (sent < total && !c.isEnded()) {
    if (!(await c.write('a'.repeat(Math.min(chunk, total - sent))))) break;
    sent += chunk;
    await new Promise((r) => setTimeout(r, 20));
  }
  return sent;
}

describe('slow and refused clients (issue 15, DoS 2)', () => {
  it('a body that never finishes gets 408 and its socket closed', async () => {
    const c = await openRaw(url);
    await c.write(head(1000) + body(1000).slice(0, 999));
    const outcome = await within(c.ended, 8_000, undefined);
    c.socket.destroy();
    expect(outcome?.status).toBe(408);
    expect(outcome?.text).toContain('"status":408');
  }, 15_000);

  it('an idle keep-alive connection is closed after the headers timeout, not held for a minute', async () => {
    const c = await openRaw(url);
    await c.write('GET /healthz HTTP/1.1\r\nHost: cas\r\n\r\n');
    const outcome = await within(c.ended, 8_000, undefined);
    c.socket.destroy();
    expect(outcome?.status).toBe(200);
    expect(outcome?.serverEnded).toBe(true);
  }, 15_000);

  it('headers trickled a byte at a time get 408 and the socket closed', async () => {
    const c = await openRaw(url);
    await c.write('POST /bc/v1/user/identify HTTP/1.1\r\nHost: cas\r\n');
    // Never idle, never done: one header byte every 100 ms.
    const trickle = (async () => {
      for (let i = 0; i < 80 && !c.isEnded(); i++) {
        await c.write('X');
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const outcome = await within(c.ended, 8_000, undefined);
    c.socket.destroy();
    await trickle;
    expect(outcome?.status).toBe(408);
  }, 15_000);

  // A refused body is read and discarded within a bound (the request timeout, 2 s here, or
  // REFUSED_BODY: 64 MiB, 3 s after the answer), so a client still writing it reads the refusal;
  // past the bound it is cut.
  it.each([
    ['no credentials', head(10 * 1024 * KIB, false), 401],
    ['a wrong key', head(10 * 1024 * KIB).replace(`Bearer ${KEY}`, 'Bearer wrong'), 403],
    ['a body over --max-body', head(10 * 1024 * KIB), 413],
  ])(
    'a client refused for %s is read within its bound, not to the end',
    async (_name, request, status) => {
      const c = await openRaw(url);
      await c.write(request);
      const sent = await keepSending(c, 10 * 1024 * KIB);
      const outcome = await within(c.ended, 5_000, undefined);
      c.socket.destroy();
      expect(outcome?.status).toBe(status);
      // The server ended the conversation while the client still had most of its body to send.
      expect(outcome?.serverEnded).toBe(true);
      expect(sent).toBeLessThan(8 * 1024 * KIB);
    },
    20_000,
  );

  it('a client declaring a body past that bound is disconnected after the answer, not read', async () => {
    const c = await openRaw(url);
    await c.write(head(100 * 1024 * KIB));
    const sent = await keepSending(c, 500 * KIB);
    const outcome = await within(c.ended, 5_000, undefined);
    c.socket.destroy();
    expect(outcome?.status).toBe(413);
    expect(outcome?.serverEnded).toBe(true);
    expect(sent).toBeLessThan(400 * KIB);
  }, 15_000);

  it('many connections sending all but the last byte: capped, budgeted, timed out; others are served', async () => {
    const before = await processUsage(pid);
    // From 127.0.0.2: more connections than its cap of 16, each announcing a 256 KiB body.
    const attackers = await Promise.all(Array.from({ length: 40 }, () => openRaw(url, '127.0.0.2')));
    await Promise.all(attackers.map((c) => c.write(head(256 * KIB) + body(256 * KIB).slice(0, -1))));
    const during = await processUsage(pid);

    // Meanwhile a client from 127.0.0.1 is served, body and all.
    const served = await fetch(`${url}/bc/v1/user/identify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'x-app-id': PROJECT, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'honest' }),
    });
    expect(served.status).toBe(200);
    const outcomes = await within(Promise.all(attackers.map((c) => c.ended)), 8_000, undefined);
    for (const c of attackers) c.socket.destroy();
    // Every connection was ended by the server: none is left holding a socket until it gives up.
    expect(outcomes).toBeDefined();
    const statuses = (outcomes ?? []).map((o) => o.status);
    // 24 over the per-address cap are refused whatever the timing: a 503 read, or a socket closed
    // before any answer (refused on accept, the answer can be lost to the reset).
    expect(statuses.filter((s) => s === 503 || s === undefined).length).toBeGreaterThanOrEqual(24);
    // Of the 16, the budget (half the 3 MiB for one address: 6 bodies of 256 KiB) holds at most 6 at
    // once; the others are refused, and the admitted ones time out: 408, 2 s after their headers
    // (plus the 100 ms check). How many are admitted in all depends on the machine: on a loaded one
    // the server read some attackers' headers only after the first admitted had timed out and freed
    // their share (CI saw 8 and 10 admitted). So the count is not asserted, the budget is: a body
    // admitted beyond 6 came after one of the first 6 ended, so any 7 timeouts, in the order they
    // ended, span nearly the request timeout (2 s less the check and the lag of a loaded machine).
    // Seven admitted together are timed out by the same check and end within milliseconds.
    const timedOut = (outcomes ?? [])
      .filter((o) => o.status === 408)
      .map((o) => o.endedAt)
      .sort((a, b) => a - b);
    for (let i = 0; i + 6 < timedOut.length; i++)
      expect(timedOut[i + 6]! - timedOut[i]!).toBeGreaterThanOrEqual(700);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 408).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 503 || s === 408 || s === undefined)).toBe(true);
    const refusals = (outcomes ?? []).filter((o) => o.status === 503);
    expect(refusals.every((o) => /retry-after: \d+/i.test(o.text))).toBe(true);
    // While they were held: at most the per-address cap of sockets, and no body pile-up in memory.
    expect(during.fds - before.fds).toBeLessThanOrEqual(16 + 4);
    expect(during.rssMiB - before.rssMiB).toBeLessThan(64);
    // And the server lets go of every socket (the honest client's keep-alive one may remain).
    let after = await processUsage(pid);
    for (let i = 0; i < 30 && after.fds > before.fds + 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await processUsage(pid);
    }
    expect(after.fds).toBeLessThanOrEqual(before.fds + 2);
  }, 30_000);
});

describe('a clean stop (SIGTERM) with stalled clients', () => {
  // Node's own timeout checks stop when the server begins to close; a stalled client then held the
  // service up for as long as it kept its socket (found by probing: still running 80 s on).
  it('still answers a stalled body and stalled headers (408) and exits 0, where it waited on them', async () => {
    const data = tempDir();
    const started = await startServe([
      ...['--data-dir', data.path, '--api-key', KEY, '--project', PROJECT],
      ...['--headers-timeout', '400ms', '--request-timeout', '800ms'],
    ]);
    try {
      const stalledBody = await openRaw(started.info.url);
      await stalledBody.write(head(1000) + body(1000).slice(0, 999));
      const stalledHeaders = await openRaw(started.info.url);
      await stalledHeaders.write('POST /bc/v1/user/identify HTTP/1.1\r\nHost: cas\r\n');
      // Time for the service to read what was sent, well within the 400 ms headers timeout.
      await new Promise((resolve) => setTimeout(resolve, 150));
      const exited = new Promise<number | null>((resolve) => started.child.once('exit', resolve));
      started.child.kill('SIGTERM');
      // 800 ms timeouts: 10 s is the margin of a loaded 2-core machine.
      expect(await within(exited, 10_000, 'still running')).toBe(0);
      // On a loaded machine the service may read a request only once the stop began: the body's
      // request is then refused at once (503), and a connection it had read nothing of is closed as
      // idle, unanswered. Either way the service ended both conversations.
      for (const c of [stalledBody, stalledHeaders]) {
        const outcome = await within(c.ended, 2_000, 'still open');
        expect(outcome).not.toBe('still open');
        expect([408, 503, undefined]).toContain(typeof outcome === 'string' ? outcome : outcome.status);
      }
    } finally {
      await stopChild(started.child, 'SIGKILL');
      data.cleanup();
    }
  }, 30_000);
});

describe('a clean stop (SIGTERM) while a large answer is still being read', () => {
  /** 18 events of ~900 KB (the event limit is 1 MiB): a 16 MB answer, more than loopback's buffers hold. */
  async function storeLargeEvents(info: { url: string; api_key: string; project_id: string }) {
    const headers = {
      authorization: `Bearer ${info.api_key}`,
      'x-app-id': info.project_id,
      'content-type': 'application/json',
    };
    for (const part of [0, 1, 2]) {
      const events = Array.from({ length: 6 }, (_, i) => ({
        type: 'track',
        event: 'Big',
        user_id: 'big-user',
        session_id: 'big-session',
        timestamp: `2025-01-20T10:0${part}:${String(10 + i)}Z`,
        properties: { pad: `${part}${i}`.padEnd(900_000, 'x') },
      }));
      const res = await fetch(`${info.url}/bc/v1/events/queue`, {
        method: 'POST',
        headers,
        body: JSON.stringify(events),
      });
      expect(res.status, await res.text()).toBe(200);
    }
  }
  const get = (info: { api_key: string; project_id: string }) =>
    'GET /bc/v1/live-events/events?start=2000-01-01T00:00:00Z&end=2100-01-01T00:00:00Z&limit=100 HTTP/1.1\r\n' +
    `Host: cas\r\nAuthorization: Bearer ${info.api_key}\r\nX-App-ID: ${info.project_id}\r\n\r\n`;
  const firstBytes = (c: RawConnection) =>
    new Promise<void>((resolve) => c.socket.once('data', () => resolve()));

  // Node's close() destroys every connection whose answer has ended, its bytes still queued in the
  // process or not: a slow reader got the first megabytes and then EOF (found by probing).
  it('sends the whole answer before it exits, and a reader that never reads is cut after the request timeout', async () => {
    const data = tempDir();
    const started = await startServe([
      ...['--data-dir', data.path, '--api-key', KEY, '--project', PROJECT, '--request-timeout', '3s'],
    ]);
    try {
      await storeLargeEvents(started.info);
      const slow = await openRaw(started.info.url);
      const never = await openRaw(started.info.url);
      for (const c of [slow, never]) {
        const arrived = firstBytes(c);
        await c.write(get(started.info));
        await arrived;
        c.socket.pause();
      }
      // Time for the service to end both answers and fill the buffers between.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const exited = new Promise<number | null>((resolve) => started.child.once('exit', resolve));
      started.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 500));
      slow.socket.resume();
      const outcome = await within(slow.ended, 20_000, undefined);
      const [head = '', ...rest] = outcome?.text.split('\r\n\r\n') ?? [];
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
      expect(outcome?.status).toBe(200);
      expect(length).toBeGreaterThan(14_000_000);
      expect(Buffer.byteLength(rest.join('\r\n\r\n'))).toBe(length);
      // The reader that never reads holds the stop up for the request timeout (3 s), no longer.
      expect(await within(exited, 15_000, 'still running')).toBe(0);
      never.socket.destroy();
    } finally {
      await stopChild(started.child, 'SIGKILL');
      data.cleanup();
    }
  }, 60_000);

  // A client that never reads kept its answer in the service until it left: 40-100 of them asking
  // for 16 MiB took it from 360 MB to 780-900 MB (found by probing).
  it('answers 503 with Retry-After past --max-answer-in-flight, half of it per address, until the reader reads', async () => {
    const data = tempDir();
    const started = await startServe([
      ...['--data-dir', data.path, '--api-key', KEY, '--project', PROJECT, '--max-answer-in-flight', '40MiB'],
    ]);
    const opened: RawConnection[] = [];
    const open = async (address?: string) => {
      const c = await openRaw(started.info.url, address);
      opened.push(c);
      return c;
    };
    try {
      await storeLargeEvents(started.info);
      const stalled = await open();
      const arrived = firstBytes(stalled);
      await stalled.write(get(started.info));
      await arrived;
      stalled.socket.pause();
      await new Promise((resolve) => setTimeout(resolve, 500));

      // The same address asks again: its first answer (16 MB) and this one pass its 20 MiB half.
      const refused = await open();
      await refused.write(get(started.info));
      const outcome = await within(refused.ended, 20_000, undefined);
      expect(outcome?.status).toBe(503);
      expect(outcome?.text).toMatch(/retry-after: \d+/i);
      expect(outcome?.text).toContain('answers its clients have not read yet');

      // Another address holds nothing: served, within the 40 MiB in all.
      const other = await open('127.0.0.2');
      await other.write(`${get(started.info).slice(0, -2)}Connection: close\r\n\r\n`);
      expect((await within(other.ended, 20_000, undefined))?.status).toBe(200);

      // Once the first reader has read its answer, the address is served again.
      const whole = within(stalled.ended, 20_000, undefined);
      stalled.socket.resume();
      stalled.socket.end();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const again = await open();
      await again.write(`${get(started.info).slice(0, -2)}Connection: close\r\n\r\n`);
      expect((await within(again.ended, 20_000, undefined))?.status).toBe(200);
      expect((await whole)?.status).toBe(200);
    } finally {
      for (const c of opened) c.socket.destroy();
      await stopChild(started.child, 'SIGKILL');
      data.cleanup();
    }
  }, 60_000);
});

describe('the --ws-port listener (live-event sockets only)', () => {
  // It was a bare Node server: a stalled request got Node's empty 408 only after its 30 s timer,
  // and a stalled connection held a SIGTERM up (found by probing).
  it('gives a stalled request its 408 in our JSON within the timeouts, and lets SIGTERM finish', async () => {
    const data = tempDir();
    const started = await startServe([
      ...['--data-dir', data.path, '--api-key', KEY, '--project', PROJECT, '--ws-port', '0'],
      ...['--headers-timeout', '400ms', '--request-timeout', '800ms'],
    ]);
    try {
      const wsUrl = started.info.ws_url;
      if (wsUrl === undefined) throw new Error('cas serve --ws-port printed no ws_url');
      const http = wsUrl.replace(/^ws:/, 'http:');
      const stalled = await openRaw(http);
      await stalled.write('GET / HTTP/1.1\r\nHost: cas\r\n');
      // 400 ms headers timeout: 8 s is the margin of a loaded 2-core machine (Node's default was 30 s).
      const outcome = await within(stalled.ended, 8_000, undefined);
      expect(outcome?.status).toBe(408);
      expect(outcome?.text).toContain('"status":408');

      const held = await openRaw(http);
      await held.write('GET / HTTP/1.1\r\nHost: cas\r\n');
      await new Promise((resolve) => setTimeout(resolve, 150));
      const exited = new Promise<number | null>((resolve) => started.child.once('exit', resolve));
      started.child.kill('SIGTERM');
      expect(await within(exited, 8_000, 'still running')).toBe(0);
      expect(await within(held.ended, 2_000, 'still open')).not.toBe('still open');
    } finally {
      await stopChild(started.child, 'SIGKILL');
      data.cleanup();
    }
  }, 30_000);
});
