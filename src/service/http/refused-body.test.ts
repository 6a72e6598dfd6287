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
});
