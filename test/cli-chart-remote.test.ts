import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { startConnectProxy } from './helpers/connect-proxy.js';

/**
 * `cas chart --endpoint` against a local server that answers like the hosted service's OpenAPI:
 * what goes on the wire (chartControls as one JSON query parameter, both credentials), how each
 * output format renders a body, and the faults our own service never produces (plain-text 400s,
 * bodies that break the response schema). Charts over real imported data: see the report's pending list.
 */

interface Seen {
  path: string;
  controls: unknown;
  auth: string | undefined;
  app: string | undefined;
}

const seen: Seen[] = [];
let reply: (req: IncomingMessage) => { status: number; type: string; body: string };
let server: Server;
let url: string;

const day = (d: number) => `2025-03-0${d}T00:00:00+00:00`;
const segmentation = [
  {
    event_name: 'Conversation Turn',
    points: [
      { start: day(1), end: day(2), total: 9, unique: 4, average: 2.25, drilldown_id: 'abc' },
      { start: day(2), end: day(3), total: 3, unique: 3, average: 1 },
    ],
    highlights: { average_events: 6, average_unique_users: 3.5 },
  },
];

beforeAll(async () => {
  server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', 'http://x');
    const raw = target.searchParams.get('chartControls');
    seen.push({
      path: target.pathname,
      controls: raw === null ? undefined : JSON.parse(raw),
      auth: req.headers.authorization,
      app: req.headers['x-app-id'] as string | undefined,
    });
    const { status, type, body } = reply(req);
    res.writeHead(status, { 'content-type': type }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const chart = (args: string[]) =>
  runCli([
    '--endpoint',
    url,
    '--api-key',
    'key-1',
    '--project',
    'proj-1',
    '--retries',
    '1',
    'chart',
    ...args,
  ]);
const base = [
  'segmentation',
  '--event',
  'Conversation Turn',
  '--from',
  '2025-03-01',
  '--to',
  '2025-03-02',
  '--tz',
  'UTC',
];

describe('cas chart against a hosted-style server', () => {
  it('sends exactly the --print-controls object with both credentials, and prints the body unchanged', async () => {
    reply = () => ({ status: 200, type: 'application/json', body: JSON.stringify(segmentation) });
    const printed = await runCli(['chart', ...base, '--print-controls']);
    seen.length = 0;
    const result = await chart(base);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(seen).toEqual([
      {
        path: '/bc/v1/charts/segmentation-chart',
        controls: JSON.parse(printed.stdout),
        auth: expect.stringContaining('key-1'),
        app: 'proj-1',
      },
    ]);
    // stdout is a pipe here, so JSON is the default; drilldown_id survives untouched.
    expect(JSON.parse(result.stdout)).toEqual(segmentation);
  });

  // The page's "Data source" and the refusal of a broken URL printed the password whole, which
  // `cas config` masks (found by probing).
  it("never prints the password of the endpoint's userinfo", async () => {
    reply = () => ({ status: 200, type: 'application/json', body: JSON.stringify(segmentation) });
    const withUser = url.replace('http://', 'http://user:pw-secret-7@');
    const credentials = ['--api-key', 'key-1', '--project', 'proj-1', '--retries', '1'];
    const page = await runCli(['--endpoint', withUser, ...credentials, 'chart', ...base, '--format', 'html']);
    expect(page.code, page.stderr).toBe(0);
    expect(page.stdout).toContain(url.replace('http://', 'http://user:***@'));
    expect(page.stdout + page.stderr).not.toContain('pw-secret-7');
    const broken = await runCli(
      ['--endpoint', 'http://user:pw-secret-7@127.0.0.1:99999', ...credentials, 'chart', ...base],
      { env: { CAS_ENDPOINT: 'ftp://user:pw-secret-8@127.0.0.1:1' } },
    );
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('got "http://user:***@127.0.0.1:99999"');
    expect(broken.stdout + broken.stderr).not.toMatch(/pw-secret/);
  });

  it('goes through the proxy HTTPS_PROXY / HTTP_PROXY name, as a CI runner behind one needs', async () => {
    reply = () => ({ status: 200, type: 'application/json', body: JSON.stringify(segmentation) });
    const proxy = await startConnectProxy();
    try {
      const remote = url.replace('127.0.0.1', 'cas-remote.invalid');
      const credentials = ['--api-key', 'key-1', '--project', 'proj-1', '--retries', '1'];
      const result = await runCli(['--endpoint', remote, ...credentials, 'chart', ...base], {
        env: { HTTP_PROXY: proxy.url },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(segmentation);
      expect(proxy.asked).toEqual([remote.replace('http://', '')]);
    } finally {
      await proxy.close();
    }
  });

  it('renders the same numbers as a table, CSV and JSONL, with nothing else on stdout', async () => {
    reply = () => ({ status: 200, type: 'application/json', body: JSON.stringify(segmentation) });
    const table = await chart([...base, '--format', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout.includes('\u001b[')).toBe(false);
    expect(table.stdout).toMatch(/│ 2025-03-01 │\s+9 │\s+4 │\s+2\.25 │ █{20} │/);
    expect(table.stdout).toMatch(/│ 2025-03-02 │\s+3 │\s+3 │\s+1 │ █{6}▋\s+│/);
    expect(table.stdout).toContain('Average per day: 6 events, 3.5 unique users');

    const csv = await chart([...base, '--format', 'csv']);
    const records: Record<string, string>[] = parse(csv.stdout, { columns: true });
    expect(records.map((r) => [r.start, Number(r.total), Number(r.unique), Number(r.average)])).toEqual(
      segmentation[0]!.points.map((p) => [p.start, p.total, p.unique, p.average]),
    );

    const jsonl = await chart([...base, '--format', 'jsonl']);
    expect(
      jsonl.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).total),
    ).toEqual([9, 3]);
  });

  it('exits 8 with the server message on a plain-text 400', async () => {
    reply = () => ({ status: 400, type: 'text/plain', body: 'chartControls.range.tz: unknown time zone' });
    const result = await chart(base);
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('unknown time zone');
  });

  it('refuses a body that breaks the response schema, naming the field', async () => {
    reply = () => ({
      status: 200,
      type: 'application/json',
      body: JSON.stringify([{ event_name: 'X', points: [{ start: day(1), end: day(2), total: 'many' }] }]),
    });
    const result = await chart(base);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/did not match the interface: .*\[0\]\.points\[0\]\.total: /);
  });
});
