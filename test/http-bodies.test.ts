import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, stopChild } from './helpers/cli.js';
import { openRaw, type RawConnection, within } from './helpers/raw-http.js';
import { tempDir } from './helpers/temp.js';

/**
 * How `cas serve` admits request bodies: the order of 415 and 413 (decisions §1), against a real
 * service with a small body limit (8 KiB) so bodies over it are cheap to send.
 */
const KEY = 'bodies-key';
const PROJECT = 'bodies-project';
const KIB = 1024;

const dir = tempDir();
let child: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  const started = await startServe([
    ...['--data-dir', dir.path, '--api-key', KEY, '--project', PROJECT],
    ...['--max-body', '8KiB', '--auth-failure-burst', '1000'],
  ]);
  child = started.child;
  url = started.info.url;
}, 30_000);

afterAll(async () => {
  if (child) await stopChild(child, 'SIGKILL');
  dir.cleanup();
});

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
    const sized = await openRaw(url);
    await sized.write(
      head('/bc/v1/events/queue', { 'Content-Type': type, 'Content-Length': String(big.length) }),
    );
    await sized.write(big);
    expect(await answer(sized)).toBe(415);

    const chunked = await openRaw(url);
    await chunked.write(
      head('/bc/v1/events/queue', { 'Content-Type': type, 'Transfer-Encoding': 'chunked' }),
    );
    await chunked.write(chunk(big) + LAST_CHUNK);
    expect(await answer(chunked)).toBe(415);
  });

  it('JSON over the body limit is 413 either way; without credentials, 401 first', async () => {
    const sized = await openRaw(url);
    await sized.write(
      head('/bc/v1/events/queue', {
        'Content-Type': 'application/json',
        'Content-Length': String(big.length),
      }),
    );
    await sized.write(big);
    expect(await answer(sized)).toBe(413);

    const chunked = await openRaw(url);
    await chunked.write(
      head('/bc/v1/events/queue', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }),
    );
    await chunked.write(chunk(big) + LAST_CHUNK);
    expect(await answer(chunked)).toBe(413);

    const anonymous = await openRaw(url);
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
