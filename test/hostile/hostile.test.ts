import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRaw } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { BODY_ROUTES, bodyCases, queueCases } from './bodies.js';
import { expectOneLine, expectRefusal, type HostileCase, send, snapshot } from './harness.js';
import { chartCases, RANGE, readCases } from './queries.js';

/**
 * Issue 7, item 1: every route refuses hostile input with a 4xx JSON error, never a 500 or a hang,
 * and nothing in the project changes. Cases that are legitimately valid reads (SQL text as a filter
 * value, a catastrophic regex) must answer 200 with the harmless result; valid *writes* live in
 * accepted.test.ts, on a service of their own, so the before/after comparison here stays exact.
 */

let t: TestService;
let before: unknown;
const LONG = `${'a'.repeat(200_000)}!`;

beforeAll(async () => {
  t = await startTestService(undefined, {
    // Hundreds of cases refused for their credentials come from one address: no failed-auth limit
    // here (test/http-auth-limits.test.ts covers it).
    limits: { chartRatePerSecond: 0, ingestRatePerSecond: 0, authFailureRatePerSecond: 0 },
  });
  // A second organization's project, so "foreign project" cases name a project that exists.
  await t.service.tenants.provision({ apiKey: 'other-org-key', projectId: 'other-org-project' });
  expect((await t.post('/bc/v1/user/identify', { id: 'alice', traits: { plan: 'pro' } })).status).toBe(200);
  const seeded = await t.post('/bc/v1/events/queue', [
    { type: 'start_session', session_id: 's1', user_id: 'alice', timestamp: '2025-03-09T10:00:00Z' },
    {
      type: 'track',
      event: `${'a'.repeat(99)}!`,
      session_id: 's1',
      timestamp: '2025-03-09T10:01:00Z',
      properties: { long: LONG },
    },
    {
      type: 'track',
      event: 'Conversation Turn',
      session_id: 's1',
      timestamp: '2025-03-09T10:02:00Z',
      properties: { user: 'hi', assistant: 'hello' },
    },
  ]);
  expect(seeded.status, JSON.stringify(seeded.json)).toBe(200);
  before = await snapshot(t, t.projectId);
});
afterAll(() => t.stop());

const CASES: HostileCase[] = [
  ...BODY_ROUTES.flatMap(bodyCases),
  ...queueCases(),
  ...chartCases(),
  ...readCases(),
];

describe('hostile input is refused with a 4xx JSON error', () => {
  it('has at least 150 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(150);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expectRefusal(c, await send(t, c));
  });
});

const chart = (kind: string, controls: unknown) =>
  `/bc/v1/charts/${kind}-chart?chartControls=${encodeURIComponent(JSON.stringify(controls))}`;
const SQL = "'; DROP TABLE events; --";
const segWith = (withFilter: unknown) => ({
  range: RANGE,
  eventFilters: [{ event_name: 'Any Event', with: [withFilter] }],
});
const totals = (json: unknown) =>
  (json as Array<{ points: Array<{ total: number }> }>)[0]?.points.map((p) => p.total);

/** Valid requests carrying hostile text: data, not code. Each answers 200 with the harmless result. */
const HARMLESS: Array<[string, string, (json: unknown) => void]> = [
  [
    'catastrophic regex over a 200 KB value',
    chart('segmentation', segWith({ property_name: 'long', operator: 'regex', values: ['(a+)+$'] })),
    (j) => expect(totals(j)).toEqual([0, 0, 0]),
  ],
  [
    'the same regex, not_regex, counts every event',
    chart('segmentation', segWith({ property_name: 'long', operator: 'not_regex', values: ['(a+)+$'] })),
    (j) => expect(totals(j)).toEqual([0, 4, 0]),
  ],
  [
    'catastrophic regex on event names',
    `/bc/v1/agg/event-names?event_regex=${encodeURIComponent('(a+)+$')}`,
    (j) => expect(j).toEqual([]),
  ],
  [
    'SQL as a property name',
    chart('segmentation', segWith({ property_name: SQL, values: [SQL] })),
    (j) => expect(totals(j)).toEqual([0, 0, 0]),
  ],
  [
    'quotes and $1 as values',
    chart('segmentation', segWith({ property_name: 'long', operator: 'in', values: ['"', '\\', '$1', "'"] })),
    (j) => expect(totals(j)).toEqual([0, 0, 0]),
  ],
  [
    'SQL as an event name',
    chart('session', { range: RANGE, eventFilters: [{ event_name: SQL }] }),
    (j) =>
      expect((j as { points: Array<{ sessions: number }> }).points.map((p) => p.sessions)).toEqual([0, 0, 0]),
  ],
  [
    'SQL as a trait name',
    chart('user-composition', { range: RANGE, selectedTrait: { trait_name: SQL } }),
    (j) => expect(JSON.stringify(j)).toContain('(none)'),
  ],
  [
    'SQL as a session_id',
    `/bc/v1/live-events/events?start=2000-01-01&end=2100-01-01&session_id=${encodeURIComponent(SQL)}`,
    (j) => expect(j).toEqual([]),
  ],
  [
    'SQL as a regex',
    `/bc/v1/agg/event-names?event_regex=${encodeURIComponent(SQL)}`,
    (j) => expect(j).toEqual([]),
  ],
  [
    '$1 as an event name',
    `/bc/v1/summary/event-counts?ranges=${encodeURIComponent('[{"start":"2000-01-01","end":"2100-01-01"}]')}&event_name=%241`,
    (j) => expect(j).toEqual([0]),
  ],
];

describe('hostile text in valid reads is data', () => {
  it.each(HARMLESS)('%s', async (_name, path, check) => {
    const res = await t.get(path);
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(200);
    check(res.json);
  });
});

/** Upgrade requests a websocket library would not send: each gets our 4xx error body, no socket. */
const UPGRADES: Array<[string, string, number]> = [
  [
    'no key',
    'GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
    401,
  ],
  [
    'forged key',
    'GET /?authorization_key=lv1.eyJ2IjoxfQ.AAAA HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
    401,
  ],
  [
    'the API key as a socket key',
    'GET /bc/v1/live-events/ws HTTP/1.1\r\nAuthorization: Bearer test-key\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
    401,
  ],
  [
    'a 10 KB key',
    `GET / HTTP/1.1\r\nAuthorization: Bearer lv1.${'A'.repeat(10_000)}.x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n`,
    401,
  ],
  [
    'bad Sec-WebSocket-Key',
    'GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n',
    400,
  ],
  [
    'no Sec-WebSocket-Key',
    'GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n',
    400,
  ],
  [
    'old protocol version',
    'GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
    426,
  ],
  [
    'POST upgrade',
    'POST / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nContent-Length: 0\r\n',
    405,
  ],
  [
    'upgrade at a route path',
    'GET /bc/v1/events/queue HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
    404,
  ],
  [
    'dot segments',
    'GET /bc/v1/live-events/../../../ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
    404,
  ],
  [
    'h2c upgrade with a body',
    'POST /bc/v1/events/queue HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]',
    400,
  ],
  [
    'h2c upgrade of a read, served as HTTP',
    'GET /bc/v1/agg/event-names HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n',
    401,
  ],
];

describe('hostile websocket upgrades are refused with our error body', () => {
  it.each(UPGRADES)('%s', async (_name, head, status) => {
    const raw = await openRaw(t.url);
    const withHost = head.replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nHost: x\r\n');
    await raw.write(head.includes('\r\n\r\n') ? withHost : `${withHost}\r\n`);
    const outcome = await raw.ended;
    raw.socket.destroy();
    expect(outcome.status, outcome.text).toBe(status);
    const body = JSON.parse(outcome.text.slice(outcome.text.indexOf('\r\n\r\n') + 4)) as {
      status: number;
      message: string;
    };
    expect(body.status).toBe(status);
    expectOneLine(body.message);
    expect(outcome.text).not.toMatch(/101 Switching/);
  });
});

describe('after the suite', () => {
  it('still answers /healthz and a normal request, and no stored data changed', async () => {
    expect((await t.get('/healthz')).status).toBe(200);
    const names = await t.get('/bc/v1/agg/event-names');
    expect(names.status).toBe(200);
    expect(names.json).toEqual(expect.arrayContaining(['Conversation Turn', 'Session Started']));
    expect(await snapshot(t, t.projectId)).toEqual(before);
    expect(await snapshot(t, 'other-org-project', 'other-org-key')).toMatchObject({ counts: [0], names: [] });
  });
});
