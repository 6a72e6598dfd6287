import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ResponseValidationError } from './errors.js';
import { type Client, createClient } from './http-client.js';
import { alias, eventCounts, getChart, health, identify, liveEvents, postQueue } from './routes.js';

/** A real loopback server that records each request and answers with whatever the test set. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let port: number;
let seen: Seen[];
let reply: unknown;
let client: Client;

beforeEach(async () => {
  seen = [];
  reply = {};
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  client = createClient({ endpoint: `http://127.0.0.1:${port}`, apiKey: 'k_secret', projectId: 'proj_1' });
});

afterEach(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function last(): Seen & { target: URL } {
  const request = seen.at(-1);
  if (!request) throw new Error('the server saw no request');
  return { ...request, target: new URL(request.url, 'http://x') };
}

const user = {
  organization_id: 'org',
  app_id: 'proj_1',
  user_id: 'u_01',
  id: 'alice',
  aliases: ['alice'],
  created_at: '2025-01-01T00:00:00.000Z',
  traits: { plan: 'pro', seats: 3 },
};

describe('routes', () => {
  it('identify posts JSON with auth headers and returns the checked user record', async () => {
    reply = user;
    const record = await identify(client, { id: 'alice', traits: { plan: 'pro' } });
    expect(record).toEqual(user);
    const req = last();
    expect(req.method).toBe('POST');
    expect(req.target.pathname).toBe('/bc/v1/user/identify');
    expect(req.headers.authorization).toBe('Bearer k_secret');
    expect(req.headers['x-app-id']).toBe('proj_1');
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({ id: 'alice', traits: { plan: 'pro' } });
  });

  it('alias rejects a reply that is not a user record', async () => {
    reply = { ...user, aliases: 'alice' };
    await expect(alias(client, { id: 'bob', previous_id: 'alice' })).rejects.toBeInstanceOf(
      ResponseValidationError,
    );
    expect(last().target.pathname).toBe('/bc/v1/user/alias');
  });

  it('health reads /healthz without a body', async () => {
    reply = { status: 'ok', version: '0.1.0' };
    await expect(health(client)).resolves.toEqual({ status: 'ok', version: '0.1.0' });
    expect(last().method).toBe('GET');
    expect(last().target.pathname).toBe('/healthz');
    expect(last().headers['content-type']).toBeUndefined();
  });

  it('postQueue accepts both our counts and the hosted service’s bare status', async () => {
    reply = { status: 'ok', accepted: 2, duplicates: 1 };
    const events = [
      { type: 'track', event: 'a' },
      { type: 'track', event: 'b' },
    ];
    await expect(postQueue(client, events)).resolves.toEqual(reply);
    expect(JSON.parse(last().body)).toEqual(events);
    reply = { status: 'ok' };
    await expect(postQueue(client, events)).resolves.toEqual({ status: 'ok' });
  });

  it('getChart sends chartControls as one compact JSON query parameter', async () => {
    const controls = {
      range: { start: '2025-01-01T00:00:00Z', end: '2025-02-01T00:00:00Z', period: 'week', tz: 'UTC' },
    };
    reply = [{ chart_name: 'x' }];
    await expect(getChart(client, 'retention', controls)).resolves.toEqual(reply);
    const req = last();
    expect(req.target.pathname).toBe('/bc/v1/charts/retention-chart');
    expect([...req.target.searchParams.keys()]).toEqual(['chartControls']);
    expect(req.url).toContain('chartControls=%7B%22range%22');
    expect(req.target.searchParams.get('chartControls')).toBe(JSON.stringify(controls));
  });

  it('getChart checks the reply against a given schema', async () => {
    const schema = z.array(z.object({ chart_name: z.string() }));
    reply = [{ chart_name: 'Sign Up' }];
    const chart = await getChart(client, 'user-composition', {}, { schema });
    expect(chart[0]?.chart_name).toBe('Sign Up');
    expect(last().target.pathname).toBe('/bc/v1/charts/user-composition-chart');
    reply = [{ chart_name: 1 }];
    await expect(getChart(client, 'segmentation', {}, { schema })).rejects.toBeInstanceOf(
      ResponseValidationError,
    );
  });

  it('eventCounts sends ranges as JSON and only the filters given', async () => {
    const ranges = [{ start: '2025-01-01T00:00:00Z', end: '2025-01-02T00:00:00Z' }];
    reply = [42];
    await expect(eventCounts(client, ranges, { session_id: 's 1' })).resolves.toEqual([42]);
    const req = last();
    expect(req.target.pathname).toBe('/bc/v1/summary/event-counts');
    expect(JSON.parse(req.target.searchParams.get('ranges') ?? '')).toEqual(ranges);
    expect(req.target.searchParams.get('session_id')).toBe('s 1');
    expect(req.url).toContain('session_id=s%201');
    expect(req.target.searchParams.has('conversation_id')).toBe(false);
  });

  it('liveEvents sends scalars as plain parameters', async () => {
    reply = [{ event_id: 'e1', event: 'Session Started' }];
    const rows = await liveEvents(client, {
      start: '2025-01-01T00:00:00Z',
      end: '2025-01-02T00:00:00Z',
      limit: 5,
    });
    expect(rows).toEqual(reply);
    const params = Object.fromEntries(last().target.searchParams);
    expect(params).toEqual({ start: '2025-01-01T00:00:00Z', end: '2025-01-02T00:00:00Z', limit: '5' });
    const strict = z.array(z.object({ event_id: z.string(), timestamp: z.string() }));
    await expect(liveEvents(client, { start: 'a', end: 'b' }, { schema: strict })).rejects.toBeInstanceOf(
      ResponseValidationError,
    );
  });

  it('appends route paths to an endpoint that has a path prefix', async () => {
    const prefixed = createClient({ endpoint: `http://127.0.0.1:${port}/api/`, apiKey: 'k', projectId: 'p' });
    try {
      reply = { status: 'ok' };
      await health(prefixed);
      expect(last().target.pathname).toBe('/api/healthz');
    } finally {
      await prefixed.close();
    }
  });

  it('rejects an endpoint that is not an http(s) URL', () => {
    expect(() => createClient({ endpoint: 'ftp://host', apiKey: 'k', projectId: 'p' })).toThrow(
      /http or https/,
    );
    expect(() => createClient({ endpoint: 'localhost:8787', apiKey: 'k', projectId: 'p' })).toThrow(
      TypeError,
    );
  });
});
