import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, createClient } from '../client/http-client.js';
import { runEvents, runProperties } from './events.js';

/**
 * The fallback of cas events / cas properties against a server like the hosted one: no extension
 * routes (404), only the `/agg/*` names. A real local server, answering from a small table.
 */

const EVENTS = ['Conversation Turn', 'Purchase'];
const PROPERTIES: Record<string, Record<string, string[]>> = {
  'Conversation Turn': { model: ['gpt-4o', 'claude', 'llama'], cost: ['0.1'] },
};

let server: Server;
let client: Client;
const seen: string[] = [];

/** `^name$` as the CLI escapes it, read back. */
const nameOf = (re: string | null) => (re ?? '').replace(/^\^|\$$/g, '').replace(/\\(.)/g, '$1');

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(url.pathname);
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const q = (name: string) => url.searchParams.get(name);
    switch (url.pathname) {
      case '/bc/v1/agg/event-names': {
        const re = q('event_regex');
        return send(200, re ? EVENTS.filter((e) => new RegExp(re).test(e)) : EVENTS);
      }
      case '/bc/v1/agg/property-names':
        return send(200, Object.keys(PROPERTIES[nameOf(q('event_regex'))] ?? {}));
      case '/bc/v1/agg/property-values':
        return send(200, PROPERTIES[nameOf(q('event_regex'))]?.[nameOf(q('property_name_regex'))] ?? []);
      default:
        return send(404, { status: 404, code: 'not_found', message: 'no route' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = createClient({ endpoint: `http://127.0.0.1:${port}`, apiKey: 'k', projectId: 'p', retries: 1 });
});
afterAll(async () => {
  await client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('against a service without the extension routes', () => {
  it('cas events lists the /agg names with empty counts, filtered in the service', async () => {
    expect(await runEvents({ like: '^Conv' }, { client })).toEqual({
      events: [{ event: 'Conversation Turn', count: null, users: null, first: null, last: null }],
    });
    expect(seen).toContain('/bc/v1/summary/event-stats');
  });

  it('cas properties lists names and the top values, anchored on the exact event name', async () => {
    const result = await runProperties({ event: 'Conversation Turn', top: 2 }, { client });
    expect(result).toEqual({
      event: 'Conversation Turn',
      properties: [
        {
          property: 'model',
          count: null,
          types: [],
          distinct: null,
          top: [
            { value: 'gpt-4o', count: null },
            { value: 'claude', count: null },
          ],
        },
        { property: 'cost', count: null, types: [], distinct: null, top: [{ value: '0.1', count: null }] },
      ],
    });
  });

  it('an event nobody sent: no properties, and the names to suggest', async () => {
    expect(await runProperties({ event: 'Purchse' }, { client })).toEqual({
      event: 'Purchse',
      properties: [],
      unknown: { known: EVENTS },
    });
    expect((await runProperties({ event: 'Purchase' }, { client })).unknown).toBeUndefined();
  });
});
