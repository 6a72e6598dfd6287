import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openRaw, type RawConnection, within } from './helpers/raw-http.js';
import { serveForFile } from './helpers/serve-file.js';

/**
 * How `cas serve` admits request bodies: the order of 415 and 413 (decisions §1), what chunked
 * bodies cost the in-flight budget, and gzip-encoded bodies, against a real service with small limits (bodies of 8 KiB, 24 KiB
 * in flight) so bodies over them are cheap to send.
 */
const KEY = 'bodies-key';
const PROJECT = 'bodies-project';
const KIB = 1024;

// One address may hold half the in-flight budget: 12 KiB, a body and a half.
const serve = serveForFile(KEY, PROJECT, [
  '--max-body',
  '8KiB',
  '--max-body-in-flight',
  '24KiB',
  '--auth-failure-burst',
  '1000',
]);

/** A request's head with our credentials; `headers` are written as given (null: left out). */
function head(path: string, headers: Record<string, string | null>): string {
  const all: Record<string, string | null> = {
    Host: 'cas',
    Authorization: `Bearer ${KEY}`,
    'X-App-ID': PROJECT,
    Connection: 'close',
    ...headers,
  };
  const lines = Object.entries(all).flatMap(([k, v]) => (v === null ? [] : [`${k}: ${v}`]));
  return `POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
const binaryChunk = (data: Buffer) =>
  Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
const LAST_CHUNK = '0\r\n\r\n';

/** The status a raw request got, once the server ended the conversation (undefined: none within 5 s). */
async function answer(c: RawConnection): Promise<number | undefined> {
  const outcome = await within(c.ended, 5_000, undefined);
  c.socket.destroy();
  return outcome?.status;
}

describe('415 comes before 413 (decisions §1)', () => {
  const big = 'x'.repeat(12 * KIB);

  it.each([
    ['text/plain', 'text/plain'],
    ['no content type', null],
    ['a lookalike of JSON', 'application/jsonp'],
    ['protobuf outside the OTLP route', 'application/x-protobuf'],
  ])('%s over the body limit is 415 with Content-Length or chunked', async (_name, type) => {
    const sized = await openRaw(serve.url);
    await sized.write(
      head('/bc/v1/events/queue', { 'Content-Type': type, 'Content-Length': String(big.length) }),
    );
    await sized.write(big);
    expect(await answer(sized)).toBe(415);

    const chunked = await openRaw(serve.url);
    await chunked.write(
      head('/bc/v1/events/queue', { 'Content-Type': type, 'Transfer-Encoding': 'chunked' }),
    );
    await chunked.write(chunk(big) + LAST_CHUNK);
    expect(await answer(chunked)).toBe(415);
  });

  it('JSON over the body limit is 413 either way; without credentials, 401 first', async () => {
    const sized = await openRaw(serve.url);
    await sized.write(
      head('/bc/v1/events/queue', {
        'Content-Type': 'application/json',
        'Content-Length': String(big.length),
      }),
    );
    await sized.write(big);
    expect(await answer(sized)).toBe(413);

    const chunked = await openRaw(serve.url);
    await chunked.write(
      head('/bc/v1/events/queue', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }),
    );
    await chunked.write(chunk(big) + LAST_CHUNK);
    expect(await answer(chunked)).toBe(413);

    const anonymous = await openRaw(serve.url);
    await anonymous.write(
      head('/bc/v1/events/queue', {
        Authorization: null,
        'Content-Type': 'text/plain',
        'Content-Length': String(big.length),
      }),
    );
    expect(await answer(anonymous)).toBe(401);
  });
});

describe('chunked bodies are charged the bytes that arrived', () => {
  const event = (i: number) =>
    `{"type":"track","event":"Streamed","session_id":"s-chunked-${i}","user_id":"u-chunked"}`;

  /** A chunked queue request from 127.0.0.3 (its own share of the budget), headers and `first` sent. */
  async function started(first: string): Promise<RawConnection> {
    const c = await openRaw(serve.url, '127.0.0.3');
    await c.write(
      head('/bc/v1/events/queue', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }) +
        chunk(first),
    );
    return c;
  }

  /** The answer once everything but `first` has been sent, or undefined when none came within 5 s. */
  async function finished(c: RawConnection, rest: string): Promise<number | undefined> {
    if (!c.isEnded()) await c.write(chunk(rest) + LAST_CHUNK);
    return answer(c);
  }

  it('many small chunked bodies from one address are in flight at once, and all are stored', async () => {
    // Each used to reserve the whole body limit (8 KiB): the third at once was 503.
    const bodies = Array.from({ length: 8 }, (_, i) => `[${event(i)}]`);
    const open = await Promise.all(bodies.map((b) => started(b.slice(0, 10))));
    await new Promise((r) => setTimeout(r, 100));
    expect(open.every((c) => !c.isEnded())).toBe(true);
    const statuses = await Promise.all(open.map((c, i) => finished(c, bodies[i]!.slice(10))));
    expect(statuses).toEqual(bodies.map(() => 200));
  });

  it('as do clients that stream their bodies (fetch with a stream)', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(`[${event(100 + i)}]`));
            controller.close();
          },
        });
        const response = await fetch(`${serve.url}/bc/v1/events/queue`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${KEY}`,
            'x-app-id': PROJECT,
            'content-type': 'application/json',
          },
          body,
          duplex: 'half',
        } as RequestInit);
        await response.text();
        return response.status;
      }),
    );
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('a chunked body over the body limit is still 413', async () => {
    const c = await started(`[${event(200)},`);
    const status = await finished(c, `${'{"pad":"x"},'.repeat(800)}${event(201)}]`);
    expect(status).toBe(413);
  });

  it('is refused with 503 once the bytes held from its address pass half the budget', async () => {
    // 7 KiB held by one unfinished body; a second passes 12 KiB in all past its 5th KiB.
    const holder = await started(`[${event(300)},"${'x'.repeat(7 * KIB)}`);
    const second = await started(`[${event(301)},"`);
    for (let i = 0; i < 7 && !second.isEnded(); i++) {
      await second.write(chunk('x'.repeat(KIB)));
      await new Promise((r) => setTimeout(r, 20));
    }
    const outcome = await within(second.ended, 5_000, undefined);
    second.socket.destroy();
    expect(outcome?.status).toBe(503);
    expect(outcome?.text).toMatch(/retry-after: 2/i);
    expect(outcome?.text).toContain('bytes of request bodies in flight');
    // The holder goes on and is answered: its bytes were never over the limit.
    expect(await finished(holder, '"]')).toBe(400);
  });

  it('gives the bytes back when a request ends or its client goes away', async () => {
    // Two bodies hold 10 KiB from one address, then their clients disconnect mid-body.
    const gone = await Promise.all([started('x'.repeat(5 * KIB)), started('x'.repeat(5 * KIB))]);
    await new Promise((r) => setTimeout(r, 100));
    const meanwhile = await started('[');
    await meanwhile.write(chunk('x'.repeat(3 * KIB)));
    expect((await within(meanwhile.ended, 5_000, undefined))?.status).toBe(503);
    meanwhile.socket.destroy();
    for (const c of gone) c.socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    // Nothing of theirs is held: 7 KiB more from the same address is admitted whole (400: not events).
    const after = await started(`[${'1,'.repeat(3 * KIB)}`);
    expect(await finished(after, `${'1,'.repeat(KIB / 2)}1]`)).toBe(400);
  });
});

describe('Content-Encoding on every route', () => {
  const post = async (path: string, body: Buffer | string, encoding: string) => {
    const response = await fetch(`${serve.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'x-app-id': PROJECT,
        'content-type': 'application/json',
        'content-encoding': encoding,
      },
      body,
    });
    return { status: response.status, json: (await response.json()) as { message?: string } };
  };
  const events = '[{"type":"track","event":"Zipped","session_id":"s-gzip","user_id":"u-gzip"}]';

  it('gzip bodies are decoded: stored like plain JSON', async () => {
    // Used to be 400 "request body is not valid UTF-8": the encoding was ignored.
    const queued = await post('/bc/v1/events/queue', gzipSync(events), 'gzip');
    expect(queued).toMatchObject({ status: 200, json: { accepted: 1 } });
    const identified = await post(
      '/bc/v1/user/identify',
      gzipSync('{"id":"u-gzip","traits":{"a":1}}'),
      'GZip',
    );
    expect(identified.status).toBe(200);

    const chunked = await openRaw(serve.url);
    await chunked.write(
      head('/bc/v1/events/queue', {
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
        'Transfer-Encoding': 'chunked',
      }),
    );
    await chunked.write(binaryChunk(gzipSync(events.replace('s-gzip', 's-gzip-2'))));
    await chunked.write(LAST_CHUNK);
    expect(await answer(chunked)).toBe(200);
  });

  it('other encodings are 415 naming the encoding, before 413', async () => {
    for (const encoding of ['br', 'deflate', 'zstd', 'gzip, gzip']) {
      const refused = await post('/bc/v1/events/queue', events, encoding);
      expect(refused.status).toBe(415);
      expect(refused.json.message).toContain(`"${encoding}" is not supported; send gzip or none`);
    }
    const big = await post('/bc/v1/events/queue', 'x'.repeat(12 * KIB), 'br');
    expect(big.status).toBe(415);
  });

  it('a body that inflates past the body limit is 413; one that is not gzip, 400', async () => {
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * KIB, 0x20));
    expect(bomb.length).toBeLessThan(8 * KIB);
    expect((await post('/bc/v1/events/queue', bomb, 'gzip')).status).toBe(413);
    const plain = await post('/bc/v1/events/queue', events, 'gzip');
    expect(plain).toMatchObject({ status: 400, json: { message: 'request body is not valid gzip' } });
  });
});

// The connection was closed as soon as the refusal was sent: a client still writing a body larger
// than the socket buffers got EPIPE instead of the answer, "cannot reach" (found by probing).
describe('a body refused before it arrived is read to its end, within a bound', () => {
  const send = (body: string, key = KEY) =>
    fetch(`${serve.url}/bc/v1/events/queue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'x-app-id': PROJECT, 'content-type': 'application/json' },
      body,
    });

  it('so fetch reads the 413 of a 6 MB body every time, and the 403 of an unknown key', async () => {
    const body = JSON.stringify([
      { type: 'track', event: 'Big', user_id: 'u', properties: { t: 'x'.repeat(6e6) } },
    ]);
    for (let i = 0; i < 4; i++) {
      expect((await send(body)).status).toBe(413);
      expect((await send(body, 'not-the-key')).status).toBe(403);
    }
  });

  it('a client that stops sending gets its answer, and its connection is ended after the bound', async () => {
    const stalled = await openRaw(serve.url);
    await stalled.write(
      head('/bc/v1/events/queue', {
        Connection: null,
        'Content-Type': 'application/json',
        'Content-Length': String(1024 * KIB),
      }) + 'x'.repeat(20 * KIB),
    );
    const outcome = await within(stalled.ended, 15_000, undefined);
    stalled.socket.destroy();
    expect(outcome?.status).toBe(413);
    // Kept while it might still send (REFUSED_BODY.ms, 3 s), then ended by the server.
    expect(outcome?.endedAfterMs).toBeGreaterThanOrEqual(2_500);
  });
});
