import { formatPath } from '../shared/errors.js';
import {
  EVENT_NAMES,
  parseWireEventRaw,
  WIRE_TYPES,
  type WireEventKind,
  wireErrorMap,
  kindOf as wireKindOf,
} from '../shared/events.js';
import { surelyWithin } from '../shared/json-bound.js';
import { LIMITS } from '../shared/limits.js';
import { wireParser } from '../shared/wire-parsers.js';
import { collect, FieldError, FieldReader, refuseMisplaced } from './event-builder.js';
import { canonical } from './event-id.js';
import { parseKind } from './mapping-spec.js';
import { type AccessPlan, accessFor } from './record-access.js';
import { parseTimestamp, toIso } from './timestamps.js';
import type { LeftOut, MapOutcome, MappedRecord, RawRecord, RecordKind, WireJson } from './types.js';

/** Stands in for a session id the sessionizer will derive, so the record validates like a complete event. */
export const SESSION_PLACEHOLDER = '(derived)';

const SESSION_KINDS: ReadonlySet<RecordKind> = new Set([
  'turn',
  'usage',
  'function',
  'event',
  'end_conversation',
  'end_session',
]);

const TRACK_NAMES: Partial<Record<RecordKind, string>> = {
  turn: EVENT_NAMES.conversationTurn,
  usage: EVENT_NAMES.conversationUsage,
  function: EVENT_NAMES.conversationFunction,
  end_conversation: EVENT_NAMES.conversationEnded,
};

const WIRE_KIND: Record<Exclude<RecordKind, 'wire'>, WireEventKind> = {
  turn: 'turn',
  usage: 'usage',
  function: 'function',
  event: 'custom',
  identify: 'identify',
  alias: 'alias',
  end_conversation: 'end_conversation',
  end_session: 'end_session',
};

/**
 * The shared schema of the event's kind decides validity (the same zod schema the service uses).
 * parseWireEventRaw would first walk the event for its size and reserved keys; this builder never
 * writes reserved keys (collect refuses them), and the size is bounded cheaply (surelyWithin),
 * measured only when the bound is too high: measuring every event took a third of the mapping time.
 */
function validate(kind: Exclude<RecordKind, 'wire'>, event: WireJson): string | undefined {
  const size = sizeProblem(event);
  if (size !== undefined) return size;
  // The kind the service dispatches the event to by its name: a custom event named "Conversation
  // Usage" is a usage event there. Validated as custom, the embedded service, which trusts what the
  // importer validated, failed on its missing usage (found by probing).
  const dispatched = wireKindOf(event);
  const wireKind = dispatched.ok ? dispatched.value : WIRE_KIND[kind];
  const result = wireParser(wireKind).safeParse(event, { error: wireErrorMap });
  if (result.success) return undefined;
  const issues = issuesText(result.error.issues);
  return wireKind === WIRE_KIND[kind]
    ? issues
    : `event "${String(event.event)}" is a ${wireKind} event: ${issues}`;
}

/** Why the service would refuse `event` for its size (decisions §1's per-event limit), if it would. */
export function sizeProblem(event: WireJson): string | undefined {
  if (surelyWithin(event, LIMITS.eventBytes)) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify(event));
  return bytes > LIMITS.eventBytes
    ? `event is ${bytes} bytes; at most ${LIMITS.eventBytes} allowed`
    : undefined;
}

function issuesText(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .map((i) => (i.path.length > 0 ? `${formatPath(i.path)}: ${i.message}` : i.message))
    .join('; ');
}

function kindOf(record: RawRecord, r: FieldReader, plan: AccessPlan): RecordKind | string {
  if (plan.spec.kind) return plan.spec.kind;
  const given = r.raw('kind');
  if (given === undefined) {
    // A JSONL line with a wire `type` already is a wire event; anything else needs to say what it is.
    const type = record.value.format === 'jsonl' ? record.value.value.type : undefined;
    if (typeof type === 'string' && (WIRE_TYPES as readonly string[]).includes(type)) return 'wire';
    return 'no record kind: add a "kind" column (turn, usage, function, event, identify, alias, end_conversation, end_session, wire) or pass --kind';
  }
  return (typeof given === 'string' && parseKind(given)) || `unknown record kind ${JSON.stringify(given)}`;
}

/** Properties or traits from the record's extras, nested object and `own` fields (event-builder.ts collect). */
type Into = (
  target: 'prop' | 'trait',
  nested: Record<string, unknown> | undefined,
  own: Record<string, unknown>,
  /** The nested object's name, for messages (default `properties` / `traits`). */
  nestedName?: string,
) => Record<string, unknown> | undefined;

/** The kind's own part of the event: name, properties / traits / attributes, identify and alias ids. */
function body(kind: RecordKind, r: FieldReader, into: Into, event: WireJson): void {
  switch (kind) {
    case 'turn':
      event.properties = into('prop', r.object('properties'), {
        user: r.utterance('user', 'user utterance'),
        assistant: r.utterance('assistant', 'assistant utterance'),
        assistant_id: r.text('assistant_id'),
        model: r.text('model'),
        prompt_tokens: r.number('prompt_tokens', true),
        completion_tokens: r.number('completion_tokens', true),
        cost: r.number('cost'),
      });
      return;
    case 'usage':
      event.properties = into('prop', r.object('properties'), {
        model: r.text('model'),
        prompt_tokens: r.number('prompt_tokens', true),
        completion_tokens: r.number('completion_tokens', true),
        cost: r.number('cost'),
      });
      return;
    case 'function':
      event.properties = into('prop', r.object('properties'), {
        name: r.requiredText('name', 'function name'),
        args: r.jsonText('args'),
        result: r.jsonText('result'),
        runtime: r.number('runtime', true),
      });
      return;
    case 'event':
      event.properties = into('prop', r.object('properties'), {});
      return;
    case 'end_conversation':
      event.properties = into('prop', r.object('properties'), {});
      // The wire's own place for them; the service stores them with the properties (those win).
      event.attributes = collect('trait', [], [], r.object('attributes'), {});
      return;
    case 'end_session':
      event.attributes = into('trait', r.object('attributes'), {}, 'attributes');
      return;
    case 'identify':
      event.traits = into('trait', r.object('traits'), {});
      return;
    default:
      return;
  }
}

function typeOf(kind: RecordKind): string {
  if (kind === 'identify' || kind === 'alias' || kind === 'end_session') return kind;
  return 'track';
}

/** One record → one wire event, validated with the shared wire schema, or the reason it cannot be. */
export function mapRecord(record: RawRecord, plan: AccessPlan): MapOutcome {
  const access = accessFor(record, plan);
  const r = new FieldReader(access, plan.spec);
  try {
    const kind = kindOf(record, r, plan);
    if (!isKind(kind)) return { ok: false, reason: kind };
    if (kind === 'wire') return mapWire(record);
    const time = parseTimestamp(r.raw('timestamp'), plan.spec.tz);
    if (time && !time.ok) return { ok: false, reason: time.reason };
    // Stamped at arrival instead, every record of a mistyped --map timestamp=<column> lost its time.
    const noTime = time ? undefined : r.absent('timestamp');
    if (noTime !== undefined) return { ok: false, reason: `no timestamp: ${noTime}` };
    const inSession = SESSION_KINDS.has(kind);
    const session = r.text('session_id');
    const userId = kind === 'identify' ? (r.text('id') ?? r.text('user_id')) : r.text('user_id');
    const deviceId = r.text('device_id');
    const key = userId ?? deviceId;
    if (inSession && session === undefined && key === undefined) {
      const absent = ['user_id', 'device_id', 'session_id'].map((f) => r.absent(f)).find((a) => a);
      return {
        ok: false,
        reason: `no user_id, device_id or session_id to place the record in a session; ${absent ?? 'map a column with --map user_id=<column> or give one with --set user_id=<id>'}`,
      };
    }
    const extras = access.extras(kind);
    const forced = r.forced(plan.forced);
    refuseMisplaced(kind, extras, plan.forced, r, record.value.format === 'csv' ? 'column' : 'key');
    const conversation = kind === 'end_session' ? undefined : r.text('conversation_id');
    const event: WireJson = {
      type: typeOf(kind),
      event: kind === 'event' ? r.requiredText('event', 'event name') : TRACK_NAMES[kind],
      event_id: r.text('event_id'),
      timestamp: time ? (time.iso ?? toIso(time.ms)) : undefined,
      session_id: inSession ? (session ?? SESSION_PLACEHOLDER) : session,
      conversation_id: conversation,
      user_id: kind === 'alias' ? undefined : userId,
      device_id: deviceId,
      id: kind === 'alias' ? (r.text('id') ?? r.requiredText('user_id', 'new id (id)')) : undefined,
      previous_id: kind === 'alias' ? r.requiredText('previous_id', 'previous id') : undefined,
    };
    const dropped: LeftOut[] = [];
    const into: Into = (target, nested, own, nestedName) =>
      collect(target, extras, forced, nested, own, dropped, nestedName, r);
    body(kind, r, into, event);
    const invalid = validate(kind, event);
    if (invalid !== undefined) return { ok: false, reason: invalid };
    const { source, ordinal } = record;
    const ms = time?.ms;
    const mapped: MappedRecord = {
      source,
      ordinal,
      kind,
      event,
      ms,
      session,
      conversation,
      key,
      inSession,
      raw: record.value,
    };
    if (dropped.length > 0) mapped.dropped = dropped;
    return { ok: true, mapped };
  } catch (error) {
    if (error instanceof FieldError) return { ok: false, reason: error.message };
    throw error;
  }
}

function isKind(k: string): k is RecordKind {
  return parseKind(k) === k;
}

/** A line that already is a wire event: validated as the service would, passed on with sorted keys. */
function mapWire(record: RawRecord): MapOutcome {
  if (record.value.format !== 'jsonl') return { ok: false, reason: 'wire records must come from JSONL' };
  const { kind: _kind, ...raw } = record.value.value;
  const check = parseWireEventRaw(raw);
  if (!check.ok) return { ok: false, reason: issuesText(check.issues) };
  const e = check.value;
  const ms = e.timestamp === undefined ? undefined : Date.parse(e.timestamp);
  const session = 'session_id' in e ? e.session_id : undefined;
  const conversation = 'conversation_id' in e ? e.conversation_id : undefined;
  const key = ('user_id' in e ? e.user_id : undefined) ?? ('device_id' in e ? e.device_id : undefined);
  const inSession = e.kind !== 'identify' && e.kind !== 'alias';
  const { source, ordinal } = record;
  const event = canonical(raw) as WireJson;
  return {
    ok: true,
    mapped: {
      source,
      ordinal,
      kind: 'wire',
      event,
      ms,
      session,
      conversation,
      key,
      inSession,
      raw: record.value,
    },
  };
}
