import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

/**
 * A forward proxy that tunnels (HTTP CONNECT) every host it is asked for to the same port on
 * 127.0.0.1, so a client can name a host no resolver knows; it records what it was asked for.
 */
export interface ConnectProxy {
  url: string;
  asked: string[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const asked: string[] = [];
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client, head) => {
    const target = req.url ?? '';
    asked.push(target);
    const port = Number(target.split(':').at(-1));
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
