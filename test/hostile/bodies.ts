import { EVENT_ROUTE_NAMES, type EventRoute } from '../../src/shared/events.js';
import { type HostileCase, nested, withLeadingKey } from './harness.js';

/**
 * Hostile bodies for every POST route. Each starts from a valid body of that route and breaks one
 * thing, so a 4xx proves the one broken thing was caught (not that the body was junk anyway).
 */
export interface BodyRoute {
  path: string;
  /** A body the route accepts. */
  valid: Record<string, unknown> | Array<Record<string, unknown>>;
  /** A field that must hold an id string (1–100 chars), in the (first) object. */
  idField: string;
}

const session = { session_id: 'h-s1', user_id: 'h-user' };
const EVENT_BODIES: Record<EventRoute, Record<string, unknown>> = {
  event: { type: 'track', event: 'Hostile Probe', ...session, properties: { a: 1 } },
  'start-session': { type: 'start_session', ...session },
  'end-session': { type: 'end_session', session_id: 'h-s1' },
  identify: { type: 'identify', user_id: 'h-user', traits: { plan: 'pro' } },
  alias: { type: 'alias', user_id: 'h-new', previous_id: 'h-user' },
  track: { type: 'track', event: 'Hostile Probe', ...session, properties: { a: 1 } },
  'start-conversation': { type: 'track', event: 'Conversation Started', ...session, conversation_id: 'h-c1' },
  'end-conversation': { type: 'track', event: 'Conversation Ended', ...session, conversation_id: 'h-c1' },
  'conversation-turn': {
    type: 'track',
    event: 'Conversation Turn',
    ...session,
    properties: { user: 'hi', assistant: 'hello' },
  },
  'conversation-usage': { type: 'track', event: 'Conversation Usage', ...session, properties: { cost: 0.1 } },
  'conversation-function': {
    type: 'track',
    event: 'Conversation Function',
    ...session,
    properties: { name: 'lookup' },
  },
};

const eventUrl = (name: EventRoute) =>
  name === 'event' ? '/bc/v1/events/event' : `/bc/v1/events/event/${name}`;

export const BODY_ROUTES: BodyRoute[] = [
  { path: '/bc/v1/user/identify', valid: { id: 'h-user', traits: { plan: 'pro' } }, idField: 'id' },
  { path: '/bc/v1/user/alias', valid: { id: 'h-new', previous_id: 'h-user' }, idField: 'previous_id' },
  { path: '/bc/v1/events/queue', valid: [EVENT_BODIES.track], idField: 'session_id' },
  ...EVENT_ROUTE_NAMES.map((name) => ({
    path: eventUrl(name),
    valid: EVENT_BODIES[name],
    idField: name === 'identify' || name === 'alias' ? 'user_id' : 'session_id',
  })),
];

/** The valid body with `idField` holding `valueText` (raw JSON), written as the last key so it wins. */
function withField(r: BodyRoute, valueText: string, keepValid = false): string {
  const text = JSON.stringify(r.valid);
  const end = text.lastIndexOf('}');
  const original = JSON.stringify((Array.isArray(r.valid) ? r.valid[0] : r.valid)?.[r.idField]);
  // keepValid: the valid value first, the hostile duplicate after it (JSON.parse keeps the last).
  const head = keepValid
    ? text.slice(0, end)
    : text.slice(0, end).replace(`"${r.idField}":${original}`, '"_x":0');
  return `${head},${JSON.stringify(r.idField)}:${valueText}${text.slice(end)}`;
}

function withBytes(r: BodyRoute, bytes: number[]): Buffer {
  const [before, after] = withField(r, '"@@"').split('@@') as [string, string];
  return Buffer.concat([Buffer.from(`${before}h-`, 'utf8'), Buffer.from(bytes), Buffer.from(after, 'utf8')]);
}

const ELEVEN_MIB = 11 * 1024 * 1024;

export function bodyCases(r: BodyRoute): HostileCase[] {
  const post = (name: string, body: string | Buffer, extra: Partial<HostileCase> = {}): HostileCase => ({
    name: `POST ${r.path} ${name}`,
    method: 'POST',
    path: r.path,
    body,
    ...extra,
  });
  const valid = JSON.stringify(r.valid);
  const cases: HostileCase[] = [
    post('empty body', ''),
    post('whitespace body', ' \n\t '),
    post('truncated JSON', valid.slice(0, Math.floor(valid.length / 2))),
    post('single-quoted keys', valid.replaceAll('"', "'")),
    post('trailing comma', `${valid.slice(0, -1)},}`),
    post('JSON null', 'null'),
    post('JSON number', '42'),
    post('JSON string', '"hello"'),
    post('missing fields', '{}'),
    post('__proto__ key', withLeadingKey(r.valid, '__proto__', '{"polluted":true}')),
    post('constructor key', withLeadingKey(r.valid, 'constructor', '{"prototype":{"polluted":true}}')),
    post('id as number', withField(r, '12345')),
    post('id as object', withField(r, '{"$ne":null}')),
    post('id empty string', withField(r, '""')),
    post('id of 101 chars', withField(r, JSON.stringify('x'.repeat(101)))),
    post('id of 1 MiB', withField(r, JSON.stringify('x'.repeat(1024 * 1024)))),
    post('id nested 10,000 deep', withField(r, nested(10_000, '"x"'))),
    post('duplicate key, invalid last', withField(r, 'false', true)),
    post('raw NUL byte in a string', withBytes(r, [0x00])),
    post('invalid UTF-8 (0xff 0xfe)', withBytes(r, [0xff, 0xfe])),
    post('invalid UTF-8 (truncated sequence)', withBytes(r, [0xc3, 0x28])),
    post('invalid UTF-8 (overlong NUL)', withBytes(r, [0xc0, 0x80])),
    // Issue 15, item 9: JSON escapes of half a surrogate pair decode to no character at all.
    post('lone high surrogate escape', withField(r, '"h-\\ud800"'), { status: 400 }),
    post('lone low surrogate escape', withField(r, '"h-\\udfff"'), { status: 400 }),
    post('two high surrogate escapes', withField(r, '"h-\\ud800\\ud800"'), { status: 400 }),
    post('body nested 10,000 deep', nested(10_000)),
    post('body nested 100,000 deep', nested(100_000, '{}')),
    post('text/plain', valid, { contentType: 'text/plain', status: 415 }),
    post('form encoded', 'id=x', { contentType: 'application/x-www-form-urlencoded', status: 415 }),
    post('no content type', Buffer.from(valid), { contentType: null, status: 415 }),
    post('lookalike content type', valid, { contentType: 'application/jsonp', status: 415 }),
    post('no credentials', valid, { headers: { authorization: '' }, status: 401 }),
    post('unknown key', valid, { headers: { authorization: 'Bearer not-a-key' }, status: 403 }),
    post("'; DROP key", valid, { headers: { authorization: "'; DROP TABLE api_keys; --" }, status: 403 }),
    { name: `GET ${r.path}`, method: 'GET', path: r.path, status: 405 },
    { name: `PUT ${r.path}`, method: 'PUT', path: r.path, body: valid, status: 405 },
    // Issue 15, item 10: the route is checked before the body (this one used to be 400 "body is empty").
    { name: `DELETE ${r.path}`, method: 'DELETE', path: r.path, body: '', status: 405 },
  ];
  if (['/bc/v1/events/queue', '/bc/v1/user/identify', '/bc/v1/events/event'].includes(r.path)) {
    cases.push(post('11 MiB body', `{"pad":"${'x'.repeat(ELEVEN_MIB)}"}`, { status: 413 }));
  }
  return cases;
}

/** The batch rules of decisions §2/§4: too many, one bad among many, an oversized event. */
export function queueCases(): HostileCase[] {
  const q = (name: string, body: unknown, status?: number): HostileCase => ({
    name: `POST /bc/v1/events/queue ${name}`,
    method: 'POST',
    path: '/bc/v1/events/queue',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(status === undefined ? {} : { status }),
  });
  const ok = (i: number) => ({ ...EVENT_BODIES.track, session_id: `h-batch-${i % 7}`, event_id: `hb-${i}` });
  const many = Array.from({ length: 2_000 }, (_, i) => ok(i));
  return [
    q('2,001 events', [...many, ok(2_000)], 400),
    q('2,000 events, the last invalid', [...many.slice(0, 1_999), { ...ok(1_999), type: 'nope' }], 400),
    q(
      '2,000 events, one with a __proto__ property',
      [...many.slice(0, 1_999), { ...ok(1_999), properties: JSON.parse('{"__proto__":1}') }],
      400,
    ),
    q('an event over 1 MiB', [{ ...ok(0), properties: { big: 'x'.repeat(1024 * 1024 + 10) } }], 400),
    q('a property key of 101 chars', [{ ...ok(0), properties: { ['k'.repeat(101)]: 1 } }], 400),
    q(
      '201 property keys',
      [{ ...ok(0), properties: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i])) }],
      400,
    ),
    q('null property value', [{ ...ok(0), properties: { a: null } }], 400),
    q('object property value', [{ ...ok(0), properties: { a: { b: 1 } } }], 400),
    q('a naive timestamp', [{ ...ok(0), timestamp: '2025-03-09 12:00:00' }], 400),
    q('an impossible timestamp', [{ ...ok(0), timestamp: '2025-02-30T25:61:00Z' }], 400),
    q('a timestamp in the year 3000', [{ ...ok(0), timestamp: '3000-01-01T00:00:00Z' }], 400),
    q('a timestamp in the year 0', [{ ...ok(0), timestamp: '0000-01-01T00:00:00Z' }], 400),
    q('a session-less turn', [{ ...EVENT_BODIES['conversation-turn'], session_id: undefined }], 400),
    q('a reserved track name', [{ ...ok(0), event: 'Session Started' }], 400),
    q('an array of arrays', [[ok(0)]], 400),
  ];
}
