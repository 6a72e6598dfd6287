import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createClient } from '../client/http-client.js';
import type { LiveFrame } from '../shared/live-events.js';
import { openLiveEvents } from './live-events.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const frame = (event_id: string, event: string, origin?: string): LiveFrame => ({
  organization_id: 'o',
  app_id: 'p',
  session_id: 's',
  user_id: 'u',
  event_id,
  timestamp: new Date(0).toISOString(),
  event,
  ...(origin === undefined ? {} : { origin_event_id: origin }),
});

/**
 * A real local service misbehaving on purpose: its first socket is dropped at once (a restart), the
 * second stays open; its stored events of the session hold an earlier process's event too.
 */
async function restartingService(stored: LiveFrame[]): Promise<string> {
  const wss = new WebSocketServer({ noServer: true });
  let upgrades = 0;
  const server = createServer((req, res) => {
    const body = req.url?.startsWith('/bc/v1/live-events/realtime')
      ? { authorization_key: 'k' }
      : [...stored].reverse();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  server.on('upgrade', (req, socket, head) => {
    upgrades++;
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (upgrades === 1) ws.terminate();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('onEvent after a reconnect', () => {
  it("fills the gap with this session's own events and what they generated, not an earlier process's", async () => {
    const stored = [
      frame('old-1', 'Earlier Process'),
      frame('mine-1#session-started', 'Session Started', 'mine-1'),
      frame('mine-1', 'Clicked'),
    ];
    const endpoint = await restartingService(stored);
    const http = createClient({ endpoint, apiKey: 'k', projectId: 'p', retries: 1 });
    const seen: string[] = [];
    const errors: string[] = [];
    const connection = { http, close: async () => undefined };
    const listener = openLiveEvents(
      { connect: async () => connection, refresh: async () => undefined },
      's',
      { onEvent: (e) => seen.push(e.event_id), onError: (e) => errors.push(e.message) },
      undefined,
    );
    await listener.ready();
    listener.sending(['mine-1']);
    listener.acknowledged(['mine-1']);
    await listener.close();
    expect(seen).toEqual(['mine-1#session-started', 'mine-1']);
    expect(errors).toEqual([]);
  });
});
