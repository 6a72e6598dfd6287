import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectProxy, startConnectProxy } from '../../test/helpers/connect-proxy.js';
import { proxySettingsOf } from '../shared/proxy-settings.js';
import { NetworkError } from './errors.js';
import { createClient } from './http-client.js';

let service: Server;
let port = 0;
let proxy: ConnectProxy;

beforeAll(async () => {
  service = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('["Named"]'),
  );
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  port = (service.address() as AddressInfo).port;
  proxy = await startConnectProxy();
});
afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => service.close(resolve));
});

async function names(endpoint: string, env: Record<string, string>): Promise<unknown> {
  const client = createClient({
    endpoint,
    apiKey: 'k',
    projectId: 'p',
    retries: 1,
    proxy: proxySettingsOf(env),
  });
  try {
    return await client.request({ method: 'GET', path: '/bc/v1/agg/event-names' });
  } finally {
    await client.close();
  }
}

describe('a client behind a proxy (HTTP_PROXY / HTTPS_PROXY / NO_PROXY)', () => {
  // Ignored before: a CI runner behind a proxy reached no endpoint (found by probing).
  it('reaches a remote endpoint through it', async () => {
    proxy.asked.length = 0;
    await expect(
      names(`http://cas-remote.invalid:${port}`, { https_proxy: proxy.url, HTTP_PROXY: proxy.url }),
    ).resolves.toEqual(['Named']);
    expect(proxy.asked).toEqual([`cas-remote.invalid:${port}`]);
  });

  it('goes straight to a NO_PROXY host and to a loopback endpoint, our own service', async () => {
    proxy.asked.length = 0;
    const direct = names(`http://cas-remote.invalid:${port}`, {
      HTTP_PROXY: proxy.url,
      NO_PROXY: '.invalid',
    });
    await expect(direct).rejects.toBeInstanceOf(NetworkError);
    await expect(names(`http://127.0.0.1:${port}`, { HTTP_PROXY: proxy.url })).resolves.toEqual(['Named']);
    expect(proxy.asked).toEqual([]);
  });

  it('reads the variables as curl does: lower case first, empty ones unset', () => {
    expect(proxySettingsOf({})).toBeUndefined();
    expect(proxySettingsOf({ HTTP_PROXY: ' ' })).toBeUndefined();
    expect(proxySettingsOf({ http_proxy: 'http://a:1', HTTP_PROXY: 'http://b:2', no_proxy: 'x' })).toEqual({
      http: 'http://a:1',
      https: undefined,
      noProxy: 'x',
    });
  });
});
