import { type HostileCase, nested } from './harness.js';

/**
 * Hostile query strings for the GET routes. `enc` percent-encodes everything (what the CLI sends);
 * `raw` leaves JSON punctuation and brackets as typed (what a person or a browser bar sends).
 */
const enc = (value: unknown) => encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));
const raw = (value: unknown) =>
  (typeof value === 'string' ? value : JSON.stringify(value)).replaceAll(' ', '%20');

const get = (path: string, name: string, extra: Partial<HostileCase> = {}): HostileCase => ({
  name: `GET ${path.split('?')[0]} ${name}`,
  method: 'GET',
  path,
  ...extra,
});

export const RANGE = { start: '2025-03-08', end: '2025-03-11', period: 'day', tz: 'UTC' };
const SEG = { range: RANGE, eventFilters: [{ event_name: 'Any Event' }] };
const CONTROLS: Record<string, Record<string, unknown>> = {
  segmentation: SEG,
  retention: { range: RANGE, startingEvent: { event_name: 'Any Event' } },
  session: { range: RANGE },
  'user-composition': { range: RANGE, selectedTrait: { trait_name: 'plan' } },
};

/** Every chart × every way its chartControls can be wrong, in both query encodings where it matters. */
export function chartCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  for (const [kind, valid] of Object.entries(CONTROLS)) {
    const path = `/bc/v1/charts/${kind}-chart`;
    const c = (name: string, query: string, extra: Partial<HostileCase> = {}) =>
      cases.push(get(`${path}?${query}`, name, extra));
    const both = (name: string, controls: unknown) => {
      c(`${name} (encoded)`, `chartControls=${enc(controls)}`);
      c(`${name} (raw)`, `chartControls=${raw(controls)}`);
    };
    c('no chartControls', 'session_id=x');
    c('empty chartControls', 'chartControls=');
    c('truncated JSON', `chartControls=${enc(JSON.stringify(valid).slice(0, 20))}`);
    c('JSON null', 'chartControls=null');
    c('JSON array', 'chartControls=%5B%5D');
    both('unknown time zone', { ...valid, range: { ...RANGE, tz: 'Mars/Olympus_Mons' } });
    both('time zone with SQL', { ...valid, range: { ...RANGE, tz: "UTC'; DROP TABLE events; --" } });
    both('inverted range', { ...valid, range: { ...RANGE, start: '2025-03-11', end: '2025-03-08' } });
    both('huge range (day bins over 8,000 years)', {
      ...valid,
      range: { ...RANGE, start: '0001-01-01', end: '9999-12-31' },
    });
    both('range of 1,001 days', { ...valid, range: { ...RANGE, start: '2020-01-01', end: '2022-09-28' } });
    both('impossible date', { ...valid, range: { ...RANGE, start: '2025-02-30' } });
    both('unknown period', { ...valid, range: { ...RANGE, period: 'fortnight' } });
    both(
      '__proto__ in controls',
      JSON.parse(`{"__proto__":{"polluted":true},${JSON.stringify(valid).slice(1)}`),
    );
    both('extra field', { ...valid, drop: "'; DROP TABLE events; --" });
    both('range as a string', { ...valid, range: '2025' });
    both('invalid regex', {
      ...valid,
      userFilters: [{ with: [{ property_name: 'plan', operator: 'regex', values: ['(?<x'] }] }],
    });
    both('cohort with a newline', { ...valid, userFilters: [{ cohort: 'Evil\nCohort' }] });
    both('property name __proto__', {
      ...valid,
      userFilters: [{ with: [{ property_name: '__proto__', values: ['x'] }] }],
    });
    both('NUL in the time zone', { ...valid, range: { ...RANGE, tz: 'UTC\u0000' } });
    c(
      'nested 2,000 deep in values',
      `chartControls=${enc({ ...valid, userFilters: [{ with: [{ property_name: 'p', values: '@' }] }] }).replace(enc('"@"'), enc(nested(2_000)))}`,
    );
    c('nested 10,000 deep (too long a URL)', `chartControls=${enc(nested(10_000))}`);
    c('both encodings at once', `chartControls=${enc(valid)}&chartControls[range][tz]=UTC`);
    c('chartControls twice', `chartControls=${enc(valid)}&chartControls=${enc(valid)}`);
    c(
      'bracket: unknown zone',
      'chartControls[range][start]=2025-03-08&chartControls[range][end]=2025-03-11&chartControls[range][tz]=Nowhere/Zone',
    );
    c(
      'bracket, encoded: unknown zone',
      'chartControls%5Brange%5D%5Bstart%5D=2025-03-08&chartControls%5Brange%5D%5Bend%5D=2025-03-11&chartControls%5Brange%5D%5Btz%5D=Nowhere%2FZone',
    );
    c('bracket: __proto__ segment', 'chartControls[__proto__][polluted]=1');
    c('bracket: constructor segment', 'chartControls[range][constructor][prototype]=1');
    c('bracket: 13 segments', `chartControls${'[a]'.repeat(13)}=1`);
    c('bracket: index gap', 'chartControls[range][tz]=UTC&chartControls[eventFilters][5][event_name]=x');
    c('bracket: value and object', 'chartControls[range]=x&chartControls[range][tz]=UTC');
    c('bracket: malformed key', 'chartControls[range=x');
    c('session_id of 101 chars', `chartControls=${enc(valid)}&session_id=${'s'.repeat(101)}`);
    c('session_id twice', `chartControls=${enc(valid)}&session_id=a&session_id=b`);
    c('no credentials', `chartControls=${enc(valid)}`, { headers: { authorization: '' }, status: 401 });
    c('foreign project', `chartControls=${enc(valid)}`, {
      headers: { 'x-app-id': 'other-org-project' },
      status: 403,
    });
    cases.push({ name: `POST ${path}`, method: 'POST', path, body: '{}', status: 405 });
  }
  return cases;
}

const LIVE = '/bc/v1/live-events/events';
const COUNTS = '/bc/v1/summary/event-counts';
const NAMES = '/bc/v1/agg/event-names';
const RETRIEVE = '/bc/v1/db/retrieve_data';
const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const token = {
  v: 1,
  kind: 'segmentation',
  scope: {},
  controls: SEG,
  point: { chart: 'segmentation', series: 0, bin: 0 },
};

export function readCases(): HostileCase[] {
  const period = 'start=2025-03-08T00:00:00Z&end=2025-03-11T00:00:00Z';
  const ranges = (value: unknown) => `${COUNTS}?ranges=${enc(value)}`;
  return [
    get(`${LIVE}`, 'no range'),
    get(`${LIVE}?start=yesterday&end=today`, 'words for times'),
    get(`${LIVE}?start=2025-03-09T12:00:00&end=2025-03-10T12:00:00`, 'naive times'),
    get(`${LIVE}?start=2025-03-11&end=2025-03-08`, 'inverted range'),
    get(`${LIVE}?start=2025-02-30&end=2025-03-08`, 'impossible date'),
    get(`${LIVE}?start=%00&end=2025-03-08`, 'NUL start'),
    get(`${LIVE}?${period}&limit=-1`, 'negative limit'),
    get(`${LIVE}?${period}&limit=1e9`, 'limit over the maximum'),
    get(`${LIVE}?${period}&limit=1.5`, 'fractional limit'),
    get(`${LIVE}?${period}&limit=abc`, 'limit not a number'),
    get(`${LIVE}?${period}&start=2025-01-01T00:00:00Z`, 'start twice'),
    get(`${LIVE}?${period}&session_id=${'s'.repeat(101)}`, 'session_id of 101 chars'),
    get(`${LIVE}?${period}`, 'foreign project', {
      headers: { 'x-app-id': 'other-org-project' },
      status: 403,
    }),
    get(`/bc/v1/live-events/realtime?session_id=${'s'.repeat(101)}`, 'realtime: session_id of 101 chars'),
    get('/bc/v1/live-events/realtime', 'realtime: foreign project', {
      headers: { 'x-app-id': 'other-org-project' },
      status: 403,
    }),
    get('/bc/v1/live-events/realtime', 'realtime: no key', { headers: { authorization: '' }, status: 401 }),
    get(`${COUNTS}`, 'no ranges'),
    get(`${COUNTS}?ranges=not-json`, 'ranges not JSON'),
    get(ranges([]), 'empty ranges'),
    get(ranges({ start: '2025-03-08', end: '2025-03-09' }), 'ranges as an object'),
    get(ranges([{ start: '2025-03-09', end: '2025-03-08' }]), 'inverted range'),
    get(ranges([{ start: '2025-03-08' }]), 'range without end'),
    get(
      `${COUNTS}?ranges=${raw([{ start: "2025'; DROP TABLE events; --", end: '2025-03-09' }])}`,
      'SQL in a bound (raw)',
    ),
    get(`${COUNTS}?ranges[0][start]=2025-03-09&ranges[0][end]=2025-03-08`, 'bracket inverted range'),
    get(`${COUNTS}?ranges%5B0%5D%5Bstart%5D=x&ranges%5B0%5D%5Bend%5D=y`, 'bracket encoded, bad bounds'),
    get(
      `${COUNTS}?ranges[99999][start]=2025-03-08&ranges[99999][end]=2025-03-09`,
      'bracket sparse index 99,999',
    ),
    get(
      `${COUNTS}?ranges=${enc([{ start: '2025-03-08', end: '2025-03-09' }])}&event_name=${'e'.repeat(101)}`,
      'event_name of 101 chars',
    ),
    get(`${NAMES}?event_regex=${enc('(?<x')}`, 'invalid regex'),
    get(`${NAMES}?event_regex=${enc('a'.repeat(1001))}`, 'regex of 1,001 chars'),
    get(`${NAMES}?event_regex=a&event_regex=b`, 'regex twice'),
    get(`${NAMES}?session_id=${'s'.repeat(101)}`, 'session_id of 101 chars'),
    get(`${NAMES}`, 'no credentials', { headers: { authorization: '' }, status: 401 }),
    get(`${RETRIEVE}`, 'no id'),
    get(`${RETRIEVE}?id=`, 'empty id'),
    get(`${RETRIEVE}?id=${enc('not a token!')}`, 'id with punctuation'),
    get(`${RETRIEVE}?id=${b64('not json')}`, 'id not JSON'),
    get(`${RETRIEVE}?id=${b64({ ...token, v: 2 })}`, 'unknown token version'),
    get(
      `${RETRIEVE}?id=${b64({ ...token, point: { chart: 'segmentation', series: 0, bin: 999_999 } })}`,
      'point outside the chart',
    ),
    get(`${RETRIEVE}?id=${b64({ ...token, kind: 'retention' })}`, 'kind and point disagree'),
    get(
      `${RETRIEVE}?id=${b64({ ...token, controls: { ...SEG, range: { ...RANGE, tz: 'Mars/Base' } } })}`,
      'unknown zone inside',
    ),
    get(
      `${RETRIEVE}?id=${b64(`{"__proto__":{"x":1},${JSON.stringify(token).slice(1)}`)}`,
      '__proto__ inside',
    ),
    get(
      `${RETRIEVE}?id=${b64({ ...token, scope: { session_id: "'; DROP TABLE events; --".repeat(5) } })}`,
      'scope id too long',
    ),
    get(`${RETRIEVE}?id=${b64(token)}`, 'foreign project', {
      headers: { 'x-app-id': 'other-org-project' },
      status: 403,
    }),
    get('/bc/v1/openapi.json', 'no credentials', {
      headers: { authorization: '', 'x-app-id': '' },
      status: 401,
    }),
    { name: 'POST /healthz', method: 'POST', path: '/healthz', body: '{}', status: 405 },
    get('/bc/v1/nope', 'unknown route', { status: 404 }),
    get('/bc/v1/%00%ff', 'NUL and bad UTF-8 in the path'),
    get('/bc/v1/events/queue', 'wrong method', { status: 405 }),
  ];
}
