import { z } from 'zod';
import { formatPath, type Issue } from './errors.js';
import {
  TRACK_EVENT_KINDS,
  WIRE_EVENT_KINDS,
  WIRE_EVENT_SCHEMAS,
  type WireEvent,
  type WireEventKind,
  wireErrorMap,
} from './event-bodies.js';
import { EVENT_NAMES, WIRE_TYPES, type WireType } from './event-names.js';
import { isPlainObject } from './event-properties.js';
import { surelyWithin } from './json-bound.js';
import { pathOf, type WalkNode } from './json-problem.js';
import { LIMITS } from './limits.js';
import { FORBIDDEN_KEYS, propertyValueSchema, scalarSchema } from './primitives.js';
import { wireParser } from './wire-parsers.js';

export * from './event-bodies.js';
export * from './event-names.js';
export * from './event-properties.js';

/** An issue before formatting: the path stays structured so callers can prefix it (`[3]`, ...). */
export interface RawIssue {
  path: PropertyKey[];
  message: string;
}
type Parsed<T> = { ok: true; value: T } | { ok: false; issues: RawIssue[] };

/** What a per-event route accepts; `type`/`event` set means the route names exactly one kind. */
export interface EventRouteSpec {
  kinds: readonly WireEventKind[];
  type?: WireType;
  event?: string;
}

// Non-track kinds are named after their wire type, so what remains are the kinds of `track`.
const TRACK_KINDS = WIRE_EVENT_KINDS.filter((k) => !(WIRE_TYPES as readonly string[]).includes(k));

/** Per-event routes of decisions §4, keyed by the path after `/bc/v1/events/event` ('event' is the bare route). */
export const EVENT_ROUTES = {
  event: { kinds: WIRE_EVENT_KINDS },
  'start-session': { kinds: ['start_session'], type: 'start_session' },
  'end-session': { kinds: ['end_session'], type: 'end_session' },
  identify: { kinds: ['identify'], type: 'identify' },
  alias: { kinds: ['alias'], type: 'alias' },
  track: { kinds: TRACK_KINDS, type: 'track' },
  'start-conversation': {
    kinds: ['start_conversation'],
    type: 'track',
    event: EVENT_NAMES.conversationStarted,
  },
  'end-conversation': { kinds: ['end_conversation'], type: 'track', event: EVENT_NAMES.conversationEnded },
  'conversation-turn': { kinds: ['turn'], type: 'track', event: EVENT_NAMES.conversationTurn },
  'conversation-usage': { kinds: ['usage'], type: 'track', event: EVENT_NAMES.conversationUsage },
  'conversation-function': { kinds: ['function'], type: 'track', event: EVENT_NAMES.conversationFunction },
} as const satisfies Record<string, EventRouteSpec>;
export type EventRoute = keyof typeof EVENT_ROUTES;
export const EVENT_ROUTE_NAMES = Object.keys(EVENT_ROUTES) as EventRoute[];

const fail = (path: PropertyKey[], message: string): Parsed<never> => ({
  ok: false,
  issues: [{ path, message }],
});

/** Bytes of a JSON leaf as JSON.stringify writes it; values JSON cannot hold count as `null`. */
function leafBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (typeof value === 'number') return JSON.stringify(value).length;
  if (typeof value === 'boolean') return value ? 4 : 5;
  return 4;
}

/**
 * One walk over a parsed JSON value: its serialized size in UTF-8 bytes, and every `__proto__` /
 * `constructor` / `prototype` key at any depth (decisions §1), unknown fields included. Iterative
 * with parent links, because JSON.stringify and recursive walks overflow the stack on a few thousand
 * levels of nesting that JSON.parse accepts happily.
 */
export function scanJson(value: unknown): { bytes: number; forbidden: RawIssue[] } {
  // Most events never get here (parseWireEventRaw tries surelyWithin first). Fast path: one native
  // serialization gives the size, and a text that never mentions a forbidden name (keys are written
  // verbatim, these names need no escaping) holds none. Deep nesting (RangeError) and values JSON
  // cannot hold (BigInt) take the walk below.
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text !== undefined && !FORBIDDEN_TEXT.test(text))
    return { bytes: Buffer.byteLength(text, 'utf8'), forbidden: [] };
  return walkJson(value);
}

const FORBIDDEN_TEXT = new RegExp([...FORBIDDEN_KEYS].map((k) => `"${k}"`).join('|'));

function walkJson(value: unknown): { bytes: number; forbidden: RawIssue[] } {
  const forbidden: RawIssue[] = [];
  let bytes = 0;
  const stack: WalkNode[] = [{ node: value, parent: undefined, key: undefined }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const v = node.node;
    if (typeof node.key === 'string' && FORBIDDEN_KEYS.has(node.key)) {
      forbidden.push({ path: pathOf(node), message: `key "${node.key}" is not allowed` });
    }
    if (Array.isArray(v)) {
      bytes += 2 + Math.max(0, v.length - 1);
      // Pushed in reverse so nodes are visited, and issues listed, in document order.
      for (let i = v.length - 1; i >= 0; i--) stack.push({ node: v[i], parent: node, key: i });
    } else if (isPlainObject(v)) {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, x] = entries[i]!;
        bytes += leafBytes(key) + 1;
        stack.push({ node: x, parent: node, key });
      }
    } else {
      bytes += leafBytes(v);
    }
  }
  return { bytes, forbidden };
}

/** Chooses the kind from `type`, then from `event` for `track`, so errors come from one schema only. */
export function kindOf(raw: Record<string, unknown>): Parsed<WireEventKind> {
  const { type, event } = raw;
  if (type === undefined) return fail(['type'], `required: one of ${WIRE_TYPES.join(', ')}`);
  if (typeof type !== 'string' || !(WIRE_TYPES as readonly string[]).includes(type)) {
    return fail(['type'], `must be one of ${WIRE_TYPES.join(', ')}`);
  }
  if (type !== 'track') return { ok: true, value: type as Exclude<WireType, 'track'> };
  if (event === undefined) return fail(['event'], 'required for type "track": the event name');
  if (typeof event !== 'string') return fail(['event'], 'must be a string');
  return { ok: true, value: TRACK_EVENT_KINDS.get(event) ?? 'custom' };
}

function routeMismatch(spec: EventRouteSpec, raw: Record<string, unknown>): RawIssue {
  const wanted = spec.event ? `type "${spec.type}" with event "${spec.event}"` : `type "${spec.type}"`;
  const field = spec.type !== undefined && raw.type === spec.type ? 'event' : 'type';
  return {
    path: [field],
    message: `this route takes only ${wanted}; send other events to /bc/v1/events/event`,
  };
}

/** Parses one wire event; with a route spec, also enforces the route's kinds and fills its type/event if left out. */
export function parseWireEventRaw(
  raw: unknown,
  spec: EventRouteSpec = EVENT_ROUTES.event,
  eventBytes: number = LIMITS.eventBytes,
  /** False when the caller vouches for size and keys (see QueueOptions.checkedBytes). */
  scan = true,
): Parsed<WireEvent> {
  if (!isPlainObject(raw)) return fail([], 'must be an event object');
  if (scan && !surelyWithin(raw, eventBytes)) {
    const { bytes, forbidden } = scanJson(raw);
    if (bytes > eventBytes) return fail([], `event is ${bytes} bytes; at most ${eventBytes} allowed`);
    if (forbidden.length > 0) return { ok: false, issues: forbidden };
  }
  // A body posted to /conversation-turn says what it is by its route; naming it again is optional.
  let input = raw;
  if (spec.type !== undefined && raw.type === undefined) input = { ...input, type: spec.type };
  if (spec.event !== undefined && raw.event === undefined) input = { ...input, event: spec.event };
  const kind = kindOf(input);
  if (!kind.ok) return kind;
  if (!spec.kinds.includes(kind.value)) return { ok: false, issues: [routeMismatch(spec, input)] };
  const schema: z.ZodType<WireEvent> = wireParser(kind.value);
  const result = schema.safeParse(input, { error: wireErrorMap });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: result.error.issues.map((i) => ({ path: [...i.path], message: i.message })) };
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

function formatted<T>(r: Parsed<T>): ParseResult<T> {
  return r.ok
    ? r
    : { ok: false, issues: r.issues.map((i) => ({ path: formatPath(i.path), message: i.message })) };
}

/** Parses one event as a per-event route receives it; issue paths are `properties.user`-style. */
export function parseRouteEvent(
  route: EventRoute,
  raw: unknown,
  eventBytes: number = LIMITS.eventBytes,
): ParseResult<WireEvent> {
  return formatted(parseWireEventRaw(raw, EVENT_ROUTES[route], eventBytes));
}

/** Wraps the dispatcher as a zod schema, so `.safeParse` callers get the same issues and typed output. */
function dispatchingSchema(spec: EventRouteSpec) {
  return z.unknown().transform((raw, ctx): WireEvent => {
    const r = parseWireEventRaw(raw, spec);
    if (r.ok) return r.value;
    for (const issue of r.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    return z.NEVER;
  });
}

/** Any one wire event, normalized: `kind` added, `id` folded into `user_id`, unknown top-level fields dropped. */
export const wireEventSchema = dispatchingSchema(EVENT_ROUTES.event);

/** One zod schema per per-event route, for the service's validation hook. */
export const eventRouteSchemas = Object.fromEntries(
  EVENT_ROUTE_NAMES.map((route) => [route, dispatchingSchema(EVENT_ROUTES[route])]),
) as Record<EventRoute, ReturnType<typeof dispatchingSchema>>;

/**
 * Input shapes of each route for the generated OpenAPI (decisions §1). Validation goes through the
 * dispatcher above instead, since these unions would report errors from every branch.
 */
export function eventRouteInputSchema(route: EventRoute): z.ZodType {
  const schemas = EVENT_ROUTES[route].kinds.map((k) => WIRE_EVENT_SCHEMAS[k]);
  const [first, second, ...rest] = schemas;
  if (first === undefined) throw new Error(`route ${route} accepts no event kind`);
  return second === undefined ? first : z.union([first, second, ...rest]);
}

export interface QueueLimits {
  eventsPerRequest: number;
  eventBytes: number;
  /** Cap on issues listed in one 400, so a body of 2,000 bad events yields a readable answer. */
  maxIssues: number;
}
const DEFAULT_QUEUE_LIMITS: QueueLimits = {
  eventsPerRequest: LIMITS.eventsPerRequest,
  eventBytes: LIMITS.eventBytes,
  maxIssues: 100,
};

export interface QueueOptions extends Partial<QueueLimits> {
  /**
   * The body was parsed from JSON text of this many bytes by a parser that already refused
   * `__proto__` / `constructor` / `prototype` keys (the service's). Re-serializing parsed JSON grows
   * it by at most a quarter (`1e21` becomes `1e+21`), so when twice this fits in `eventBytes` no
   * event can be too large, and the per-event scan (a JSON.stringify of every event) is skipped.
   */
  checkedBytes?: number | undefined;
}

/** The queue body as raw issues (unbounded, paths structured); parseQueueBody formats and caps them. */
export function parseQueueBodyRaw(raw: unknown, limits: QueueOptions = {}): Parsed<WireEvent[]> {
  const { eventsPerRequest, eventBytes, checkedBytes } = { ...DEFAULT_QUEUE_LIMITS, ...limits };
  const scan = checkedBytes === undefined || checkedBytes * 2 > eventBytes;
  // The official Python client posts a lone object; decisions §4 accepts it as a one-event batch.
  const items = Array.isArray(raw) ? raw : isPlainObject(raw) ? [raw] : undefined;
  if (items === undefined) return fail([], 'must be a JSON array of events or one event object');
  if (items.length === 0) return fail([], 'must hold at least one event');
  if (items.length > eventsPerRequest) {
    return fail([], `at most ${eventsPerRequest} events per request (got ${items.length})`);
  }
  const events: WireEvent[] = [];
  const issues: RawIssue[] = [];
  items.forEach((item, index) => {
    const r = parseWireEventRaw(item, EVENT_ROUTES.event, eventBytes, scan);
    if (r.ok) events.push(r.value);
    else for (const i of r.issues) issues.push({ path: [index, ...i.path], message: i.message });
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: events };
}

/** Validates a whole `/events/queue` body (all or nothing, decisions §4); paths look like `[3].properties.user`. */
export function parseQueueBody(
  raw: unknown,
  limits: QueueOptions = {},
): { ok: true; events: WireEvent[] } | { ok: false; issues: Issue[] } {
  const r = formatted(parseQueueBodyRaw(raw, limits));
  if (r.ok) return { ok: true, events: r.value };
  const max = limits.maxIssues ?? DEFAULT_QUEUE_LIMITS.maxIssues;
  if (r.issues.length <= max) return r;
  const shown = r.issues.slice(0, max);
  shown.push({ path: '', message: `${r.issues.length - max} more issues not shown` });
  return { ok: false, issues: shown };
}

/** The queue body as a zod schema (array or lone object in, normalized event array out). */
export const queueBodySchema = z.unknown().transform((raw, ctx): WireEvent[] => {
  const r = parseQueueBodyRaw(raw);
  if (r.ok) return r.value;
  for (const issue of r.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
});

/** The `event` a wire event is stored under (decisions §4: every stored row has a name). */
export function storedEventName(e: WireEvent): string {
  switch (e.kind) {
    case 'start_session':
      return EVENT_NAMES.sessionStarted;
    case 'end_session':
      return EVENT_NAMES.sessionEnded;
    case 'identify':
      return EVENT_NAMES.userIdentified;
    case 'alias':
      return EVENT_NAMES.userAliased;
    default:
      return e.event;
  }
}

/** `POST /events/queue` answer, sent only after the commit (decisions §4). */
export const queueResponseSchema = z.object({
  status: z.literal('ok'),
  accepted: z.number().int().min(0),
  duplicates: z.number().int().min(0),
});
export type QueueResponse = z.infer<typeof queueResponseSchema>;

const storedPropertiesSchema = z.record(z.string(), propertyValueSchema);

/** One element of a per-event route's answer: the request's own event as stored, or one it generated. */
export const routeEventSchema = z.looseObject({
  type: z.enum(WIRE_TYPES),
  event: z.string().optional(),
  session_id: z.string().optional(),
  conversation_id: z.string().optional(),
  timestamp: z.string(),
  event_id: z.string().optional(),
  user_id: z.string().optional(),
  device_id: z.string().optional(),
  properties: storedPropertiesSchema.optional(),
});
export type RouteEvent = z.infer<typeof routeEventSchema>;
export const routeResponseSchema = z.array(routeEventSchema);

/** A stored row as `GET /bc/v1/live-events/events` lists it; `user_id` is the current primary caller id. */
export const storedEventSchema = z.object({
  organization_id: z.string(),
  app_id: z.string(),
  session_id: z.string(),
  user_id: z.string(),
  event_id: z.string(),
  conversation_id: z.string().optional(),
  origin_event_id: z.string().optional(),
  timestamp: z.string(),
  event: z.string(),
  properties: storedPropertiesSchema.optional(),
  user_traits: z.record(z.string(), scalarSchema).optional(),
});
export type StoredEvent = z.infer<typeof storedEventSchema>;
export const liveEventsResponseSchema = z.array(storedEventSchema);
