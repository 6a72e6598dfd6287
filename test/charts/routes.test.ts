import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed } from '../helpers/seed.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** The chart routes over HTTP on the real service: validation, empty projects, both query forms. */

let t: TestService;
const range = { start: '2025-03-08', end: '2025-03-11', period: 'day', tz: 'America/New_York' };

beforeAll(async () => {
  t = await startTestService(undefined, { limits: { chartRatePerSecond: 10_000, chartBurst: 10_000 } });
  await t.service.tenants.provision({ apiKey: t.apiKey, projectId: 'empty-project' });
  await seed(t.service.db, t.projectId, {
    users: [{ user_id: 'alice', traits: { plan: 'pro' } }],
    sessions: [{ session_id: 's1', user_id: 'alice', started_at: '2025-03-09T15:00:00Z' }],
    events: [
      { event: 'Turn', ts: '2025-03-09T15:00:00Z', user_id: 'alice', session_id: 's1' },
      { event: 'Turn', ts: '2025-03-09T16:00:00Z', user_id: 'alice', session_id: 's2' },
    ],
  });
});
afterAll(() => t.stop());

function chart(kind: string, controls: unknown, extra = '', headers?: Record<string, string>) {
  const query = `chartControls=${encodeURIComponent(JSON.stringify(controls))}${extra}`;
  return t.get(`/bc/v1/charts/${kind}-chart?${query}`, headers);
}

const empty = { 'x-app-id': 'empty-project' };

describe('chart routes', () => {
  it('answers every bin with zeros for a project without data, for all four charts', async () => {
    const seg = await chart(
      'segmentation',
      { range, eventFilters: [{ event_name: 'Any Event' }] },
      '',
      empty,
    );
    expect(seg.status).toBe(200);
    expect(seg.json).toMatchObject([{ event_name: 'Any Event', highlights: { average_events: 0 } }]);
    const points = (seg.json as Array<{ points: Array<{ start: string; total: number }> }>)[0]!.points;
    expect(points.map((p) => [p.start, p.total])).toEqual([
      ['2025-03-08T00:00:00-05:00', 0],
      ['2025-03-09T00:00:00-05:00', 0],
      ['2025-03-10T00:00:00-04:00', 0],
    ]);
    const ret = await chart('retention', { range, startingEvent: { event_name: 'Turn' } }, '', empty);
    expect(ret.json).toMatchObject([{ row_headers: [0, 0, 0], total_users: 0 }]);
    const ses = await chart('session', { range }, '', empty);
    expect(ses.json).toMatchObject({ points: [{ sessions: 0 }, { sessions: 0 }, { sessions: 0 }] });
    const comp = await chart('user-composition', { range, selectedTrait: { trait_name: 'plan' } }, '', empty);
    expect(comp.json).toMatchObject({ chart_name: 'plan', slices: [] });
  });

  it('accepts the bracket (deepObject) form as well as JSON', async () => {
    const q = [
      'chartControls[range][start]=2025-03-08',
      'chartControls[range][end]=2025-03-11',
      'chartControls[range][period]=day',
      'chartControls[range][tz]=America/New_York',
      'chartControls[eventFilters][0][event_name]=Turn',
      'chartControls[eventFilters][0][with][0][property_name]=plan',
      'chartControls[eventFilters][0][with][0][operator]=in',
      'chartControls[eventFilters][0][with][0][values][]=pro',
    ].map((kv) => kv.replace(/\[/g, '%5B').replace(/\]/g, '%5D').replace('/', '%2F'));
    const res = await t.get(`/bc/v1/charts/segmentation-chart?${q.join('&')}`);
    expect(res.status).toBe(200);
    expect((res.json as Array<{ points: Array<{ total: number }> }>)[0]!.points.map((p) => p.total)).toEqual([
      0, 2, 0,
    ]);
  });

  it('narrows the events to one session with session_id', async () => {
    const res = await chart(
      'segmentation',
      { range, eventFilters: [{ event_name: 'Turn' }] },
      '&session_id=s1',
    );
    expect((res.json as Array<{ points: Array<{ total: number }> }>)[0]!.points.map((p) => p.total)).toEqual([
      0, 1, 0,
    ]);
  });

  it('drills down through GET /bc/v1/db/retrieve_data, and refuses a forged id', async () => {
    const res = await chart('segmentation', { range, eventFilters: [{ event_name: 'Turn' }] });
    const id = (res.json as Array<{ points: Array<{ drilldown_id: string }> }>)[0]!.points[1]!.drilldown_id;
    const drilled = await t.get(`/bc/v1/db/retrieve_data?id=${id}`);
    expect(drilled).toMatchObject({
      status: 200,
      json: { kind: 'users', total: 1, rows: [{ user_id: 'alice' }] },
    });
    // The id names its query within its own project: in another project it names nothing.
    expect(await t.get(`/bc/v1/db/retrieve_data?id=${id}`, empty)).toMatchObject({
      status: 404,
      json: { code: 'not_found', message: expect.stringMatching(/unknown drilldown id/) },
    });
    const forged = await t.get('/bc/v1/db/retrieve_data?id=bm90LWEtdG9rZW4');
    expect(forged).toMatchObject({ status: 400, json: { code: 'invalid_input', issues: [{ path: 'id' }] } });
  });

  it('describes the routes and their chartControls parameter in the OpenAPI document', async () => {
    const doc = (await t.get('/bc/v1/openapi.json')).json as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string }> } }>;
    };
    for (const kind of ['segmentation', 'retention', 'session', 'user-composition']) {
      const names = doc.paths[`/bc/v1/charts/${kind}-chart`]?.get?.parameters?.map((p) => p.name);
      expect(names).toEqual(expect.arrayContaining(['chartControls', 'session_id', 'conversation_id']));
    }
    expect(doc.paths['/bc/v1/db/retrieve_data']?.get).toBeDefined();
  });

  it('serves concurrent chart requests on the shared reader connection', async () => {
    const controls = { range, eventFilters: [{ event_name: 'Turn' }] };
    const all = await Promise.all(Array.from({ length: 8 }, () => chart('segmentation', controls)));
    expect(all.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(all.map((r) => JSON.stringify(r.json))).size).toBe(1);
  });

  it('requires credentials like every route', async () => {
    const res = await chart('segmentation', { range, eventFilters: [{ event_name: 'Turn' }] }, '', {
      authorization: '',
      'x-app-id': '',
    });
    expect(res.status).toBe(401);
  });
});

describe('chart validation (400 naming the JSON path)', () => {
  const cases: Array<[string, string, unknown, string, RegExp]> = [
    [
      'unknown time zone',
      'segmentation',
      { range: { ...range, tz: 'Mars/Olympus' }, eventFilters: [{ event_name: 'Turn' }] },
      'range.tz',
      /unknown time zone/,
    ],
    [
      'start >= end',
      'session',
      { range: { ...range, end: '2025-03-08' } },
      'range',
      /start must be before end/,
    ],
    [
      'more than 1,000 bins',
      'session',
      { range: { ...range, start: '2020-01-01', end: '2025-01-01' } },
      'range',
      /at most 1000/,
    ],
    [
      'several values with a single-value operator',
      'segmentation',
      {
        range,
        eventFilters: [
          { event_name: 'Turn', with: [{ property_name: 'plan', operator: 'eq', values: ['a', 'b'] }] },
        ],
      },
      'eventFilters[0].with[0].values',
      /exactly one value/,
    ],
    [
      'between without two values',
      'retention',
      {
        range,
        startingEvent: {
          event_name: 'Turn',
          with: [{ property_name: 'n', operator: 'between', values: [1] }],
        },
      },
      'startingEvent.with[0].values',
      /exactly two values/,
    ],
    [
      'unknown cohort',
      'user-composition',
      { range, selectedTrait: { trait_name: 'plan' }, userFilters: [{}, { cohort: 'Power Users' }] },
      'userFilters[1].cohort',
      /unknown cohort/,
    ],
    [
      'a regex RE2 rejects',
      'segmentation',
      {
        range,
        eventFilters: [
          { event_name: 'Turn', with: [{ property_name: 'p', operator: 'regex', values: ['(a'] }] },
        ],
      },
      'eventFilters[0].with[0].values[0]',
      /RE2/,
    ],
    ['a missing chartControls', 'session', undefined, 'chartControls', /required/],
  ];

  for (const [name, kind, controls, path, message] of cases) {
    it(`rejects ${name}`, async () => {
      const res =
        controls === undefined ? await t.get(`/bc/v1/charts/${kind}-chart`) : await chart(kind, controls);
      expect(res.status).toBe(400);
      const body = res.json as { code: string; issues: Array<{ path: string; message: string }> };
      expect(body.code).toBe('invalid_input');
      const issue = body.issues.find((i) => i.path === path);
      expect(issue, JSON.stringify(body)).toBeDefined();
      expect(issue!.message).toMatch(message);
    });
  }
});
