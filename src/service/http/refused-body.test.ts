import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRefusedBody } from './refused-body.js';

/** A server that refuses every request at once, before its body arrives, as the service's hooks do. */
const counts: number[] = [];
const server = createServer((req, res) => {
  if (!req.complete) readRefusedBody(req);
  counts.push(req.socket.listenerCount('close'));
  res.writeHead(401, { 'content-type': 'application/json' }).end('{"status":401}');
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function post(agent: Agent, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A client in another process that writes its whole body before it reads (as Python's urllib does),
 * over a raw socket: prints the answer's status line, or the write's error (EPIPE, ECONNRESET). In
 * this process the server read everything before it closed, so the reset never showed.
 */
const CLIENT = `
const socket = require('node:net').connect(Number(process.argv[1]), '127.0.0.1');
let answer = '';
socket.on('data', (c) => { answer += c; });
socket.on('error', (e) => { console.log(e.code); process.exit(1); });
socket.on('end', () => console.log(answer.split('\\r\\n')[0]));
socket.write('POST / HTTP/1.1\\r\\nHost: x\\r\\nConnection: ' + process.argv[3] + '\\r\\nContent-Length: ' + process.argv[2] + '\\r\\n\\r\\n');
socket.end(Buffer.alloc(Number(process.argv[2]), 'x'));
`;

async function postWhole(bytes: number, connection: string): Promise<string> {
  const child = spawn(process.execPath, ['-e', CLIENT, String(port), String(bytes), connection], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await once(child, 'close');
    return out.trim();
  } finally {
    child.kill('SIGKILL');
  }
}

describe('readRefusedBody', () => {
  it('reads the rest of each refused body on a kept connection, leaving no listener behind', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const body = Buffer.alloc(4 * 1024 * 1024, 'x');
    try {
      for (let i = 0; i < 15; i++) expect(await post(agent, body)).toBe(401);
    } finally {
      agent.destroy();
    }
    expect(counts).toHaveLength(15);
    // One connection for all: a listener left per refusal grew by one each time (past Node's 10).
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
  });

  // Node ends a connection its client asked to close as soon as the answer is out, and that reset
  // the client still writing (Python's urllib sends `Connection: close` always; found by probing).
  it('reads the rest of a body whose client asked to close the connection, so the client reads the answer', async () => {
    for (let i = 0; i < 3; i++) expect(await postWhole(12 * 1024 * 1024, 'close')).toMatch(/^HTTP\/1.1 401 /);
  });
});
