import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';

/**
 * The CLI against a local server answering as the hosted service's OpenAPI allows: its own record
 * shapes (no key ids, no intent patterns, events without organization_id, 24-hex cohort ids), bodiless
 * DELETE answers and extra fields. Each of these failed its command with exit 1 ("did not match the
 * interface"), some after the service had acted (found by probing with a strict fake).
 */

type Answer = { status: number; body?: unknown };
const answers = new Map<string, Answer>();
const seen: string[] = [];
let server: Server;
let url: string;

const COHORT = {
  organization_id: 'o',
  app_id: 'p',
  cohort_id: '665f0c2ab1c2d3e4f5a6b7c8',
  created_at: '2025-01-01T00:00:00Z',
  updated_at: '2025-01-01T00:00:00Z',
  name: 'Pro',
  // A stored document's keys of its own, which our strict term schemas do not name.
  terms: [{ _id: 't1', operator: 'and', termFilter: { _id: 'f1', type: 'cohort', name: 'All Users' } }],
};

beforeAll(async () => {
  answers.set('GET /bc/v1/orgkeys', {
    status: 200,
    body: [{ organization_id: 'org1', apikey: 'sk-hosted-secret-0123456789' }],
  });
  answers.set('POST /bc/v1/orgkeys', {
    status: 200,
    body: { organization_id: 'org1', apikey: 'sk-new-secret-abcdefgh' },
  });
  answers.set('DELETE /bc/v1/orgkeys', { status: 200 });
  answers.set('GET /bc/v1/udi', {
    status: 200,
    body: [{ user_defined_intent_id: 'i1', intent: { name: 'refund', description: 'd' }, attributes: [] }],
  });
  answers.set('DELETE /bc/v1/udi/i1', { status: 200, body: { success: true } });
  answers.set('GET /bc/v1/user/details', {
    status: 200,
    body: {
      id: 'u1',
      user_id: 'u1',
      aliases: ['u1'],
      created_at: '2025-01-01T00:00:00Z',
      traits: {},
      sessions: [
        {
          session_id: 's1',
          user_id: 'u1',
          started_at: '2025-01-01T00:00:00Z',
          ended_at: '2025-01-01T00:05:00Z',
          attributes: {},
          user_traits: {},
          events: [
            {
              user_id: 'u1',
              event_id: 'e1',
              session_id: 's1',
              timestamp: '2025-01-01T00:00:00Z',
              event: 'Conversation Turn',
              properties: { tags: ['a', 'b'] },
              user_traits: {},
            },
          ],
        },
      ],
    },
  });
  answers.set('GET /bc/v1/cohorts/byName', {
    status: 404,
    body: { errored: true, status: 404, message: 'not found' },
  });
  answers.set('GET /bc/v1/cohorts/byId', { status: 200, body: COHORT });
  answers.set('DELETE /bc/v1/cohorts', { status: 200 });
  answers.set('GET /bc/v1/charts/conversation-analysis', {
    status: 200,
    body: {
      chart_name: 'Intent conversion',
      points: [{ start: '2025-01-06T00:00:00Z', end: '2025-01-07T00:00:00Z', conversion: 50, count: 3 }],
      highlights: { conversion: 50, count: 3, unit: 'percent' },
    },
  });
  answers.set('GET /bc/v1/charts/segmentation-chart', {
    status: 200,
    body: [
      {
        event_name: 'Conversation Turn',
        points: [
          { start: '2025-03-01T00:00:00Z', end: '2025-03-02T00:00:00Z', total: 0, unique: 0, average: 0 },
        ],
        highlights: { average_events: 0, average_unique_users: 0 },
      },
    ],
  });
  answers.set('GET /bc/v1/agg/event-names', { status: 200, body: ['Conversation Turn'] });
  server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', 'http://x');
    const key = `${req.method} ${target.pathname}`;
    seen.push(key);
    let answer = answers.get(key) ?? {
      status: 404,
      body: { errored: true, status: 404, message: 'Not Found' },
    };
    if (key === 'GET /bc/v1/summary/event-counts') {
      // Its OpenAPI requires period and tz in each range.
      const ranges = JSON.parse(target.searchParams.get('ranges') ?? '[]') as Array<Record<string, unknown>>;
      const whole = ranges.every((r) =>
        ['start', 'end', 'period', 'tz'].every((k) => typeof r[k] === 'string'),
      );
      answer = whole
        ? { status: 200, body: [0] }
        : { status: 422, body: { detail: 'ranges: period, tz required' } };
    }
    req.resume();
    req.on('end', () => {
      if (answer.body === undefined) res.writeHead(answer.status).end();
      else
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const cas = (args: string[]) =>
  runCli(['--endpoint', url, '--api-key', 'key-1', '--project', 'proj-1', '--retries', '1', ...args]);

describe('commands against hosted-shaped answers', () => {
  it('cas keys: lists keys by a masked secret, creates and revokes with the hosted answers', async () => {
    const list = await cas(['keys', 'list', '--format', 'csv']);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('sk-h…6789');
    expect(list.stdout).not.toContain('sk-hosted-secret');
    const created = await cas(['keys', 'create', '--json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ organization_id: 'org1', apikey: 'sk-new-secret-abcdefgh' });
    const revoked = await cas(['keys', 'revoke', 'sk-old-secret', '--json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ status: 'ok', revoked: ['sk-old-secret'] });
  });

  it('cas intents: lists an intent without patterns or archived, and removes it by name', async () => {
    const list = await cas(['intents', 'list', '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ user_defined_intent_id: 'i1', patterns: [], archived: false }),
    ]);
    const removed = await cas(['intents', 'remove', 'refund', '--json']);
    expect(removed.code).toBe(0);
    expect(seen).toContain('DELETE /bc/v1/udi/i1');
  });

  it('cas intents add --pattern is refused by name, not sent as a field the service drops', async () => {
    seen.length = 0;
    const added = await cas(['intents', 'add', 'refund2', '--pattern', 'money back']);
    expect(added.code).toBe(2);
    expect(added.stderr).toMatch(/--pattern: this service does not take it/);
    expect(seen).toEqual(['GET /healthz']);
  });

  it('cas users show: a session without duration, events without organization_id', async () => {
    const shown = await cas(['users', 'show', 'u1', '--format', 'table']);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/│ s1\s+│ 2025-01-01T00:00:00Z │ 2025-01-01T00:05:00Z │ -\s+│ 1\s+│/);
  });

  it('cas cohorts: finds a cohort by a hosted id, and deletes it with a bodiless answer', async () => {
    const shown = await cas(['cohorts', 'show', COHORT.cohort_id, '--members', '0', '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).cohort.name).toBe('Pro');
    const deleted = await cas(['cohorts', 'delete', COHORT.cohort_id, '--json']);
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: 'Pro', cohort_id: COHORT.cohort_id });
    expect(seen.filter((s) => s === 'DELETE /bc/v1/cohorts')).toHaveLength(1);
  });

  it('cas chart: a flag of our extensions is refused by name, not charted as if absent', async () => {
    seen.length = 0;
    const chart = await cas([
      'chart',
      'segmentation',
      '--event',
      'Conversation Turn',
      '--measure',
      'sum:cost',
      '--from',
      '2025-01-06',
      '--to',
      '2025-01-06',
    ]);
    expect(chart.code).toBe(2);
    expect(chart.stderr).toMatch(/--measure "sum:cost": this service does not take it/);
    expect(seen).toEqual(['GET /healthz']);
  });

  it("cas chart: an empty chart's hint asks for the range's counts as the hosted route requires", async () => {
    const chart = await cas([
      'chart',
      'segmentation',
      '--event',
      'Conversation Turn',
      '--from',
      '2025-03-01',
      '--to',
      '2025-03-01',
      '--tz',
      'UTC',
      '--format',
      'csv',
    ]);
    expect(chart.code).toBe(0);
    expect(chart.stderr).toContain('no "Conversation Turn" events between 2025-03-01 and 2025-03-01');
  });

  it('cas reprice: says the service has no reprice, where its 404 said only "Not Found"', async () => {
    const repriced = await cas(['reprice']);
    expect(repriced.code).toBe(4);
    expect(repriced.stderr).toContain('this service has no reprice (/bc/v1/admin/reprice is our extension');
  });

  it('cas chart conversations: a highlight holding text is shown, not refused', async () => {
    const chart = await cas([
      'chart',
      'conversations',
      '--analyse',
      'intentConversion',
      '--from',
      '2025-01-06',
      '--to',
      '2025-01-06',
      '--tz',
      'UTC',
      '--format',
      'table',
    ]);
    expect(chart.stderr).toBe('');
    expect(chart.code).toBe(0);
    expect(chart.stdout).toContain('unit percent');
  });
});
