import { formatPath } from '../../shared/errors.js';
import { EVENT_NAMES, wireErrorMap } from '../../shared/events.js';
import { wireParser } from '../../shared/wire-parsers.js';
import { canonical, contentHash } from '../event-id.js';
import { SESSION_PLACEHOLDER, sizeProblem } from '../mapper.js';
import { toIso } from '../timestamps.js';
import type { MapOutcome, SourceRef, WireJson } from '../types.js';
import { str } from './fields.js';

/** What a preset makes of its formats: the record kinds of the flat mapper that carry conversations. */
export type PresetKind = 'turn' | 'function' | 'usage';

/**
 * One record a preset read out of an item (a conversation, a log line, a trace document), before it
 * becomes a wire event: the same turn / function / usage properties the flat mapper writes, so both
 * kinds of input meet in staging and go through the same sort, sessionizing and delivery.
 */
export type IdField = 'user_id' | 'session_id' | 'conversation_id';

export interface PresetRecord {
  kind: PresetKind;
  /** JSON path of the record's origin inside the item (`mapping.<id>.message`), for messages. */
  at: string;
  /** Original time, epoch ms; undefined when the format has none (exports: `fillTimes`). */
  ms: number | undefined;
  session?: string | undefined;
  conversation?: string | undefined;
  user?: string | undefined;
  device?: string | undefined;
  /**
   * The event id from the source's own id, kept instead of the content-derived one: an OTLP span's
   * `otel-<trace id>-<span id>`, which the receiver stores it under, so the same event reaching the
   * service by another route is stored once; a logged API call's records named after the call's id
   * (`callEventId`; a Responses call's by its response id, `sourceEventId`), so the same call imported
   * again, or placed in another session by another run, is one event whatever else about it changed.
   */
  eventId?: string | undefined;
  /** The record names its user or device itself (an OTLP span, as the receiver stores it): `--set` leaves it. */
  ownIdentity?: boolean | undefined;
  /**
   * Where in the line the record's ids were read (`request.user`), so a refused id is named by its
   * place in the input: it read `response: user_id: …`, the wire's field under the turn's place.
   */
  idPaths?: Partial<Record<IdField, string>> | undefined;
  properties: Record<string, unknown>;
  /** The part of the input the record came from, for the reject file. */
  raw: Record<string, unknown>;
}

export type PresetItem = { ok: true; record: PresetRecord } | { ok: false; at: string; reason: string };

/**
 * An export's records (in the conversation's order) whose message had no time and followed none
 * that had one: the time of the next record that has one, the earliest it can be without inventing
 * one (stamped on arrival, a first turn sat 683 days after its reply: found by probing). Where
 * nothing in the conversation has a time, its records are refused: an import never invents a time.
 */
export function fillTimes(items: readonly PresetItem[]): PresetItem[] {
  const out = [...items];
  let next: number | undefined;
  for (let i = out.length - 1; i >= 0; i--) {
    const item = out[i]!;
    if (!item.ok) continue;
    if (item.record.ms !== undefined) next = item.record.ms;
    else if (next !== undefined) out[i] = { ok: true, record: { ...item.record, ms: next } };
    else
      out[i] = {
        ok: false,
        at: item.record.at,
        reason: 'no time: neither this message nor any other of its conversation has one',
      };
  }
  return out;
}

/** Defaults from `--set` (user_id, device_id), `{file}` and `{line}` filled in. */
export interface PresetDefaults {
  user: ((source: SourceRef) => string) | undefined;
  device: ((source: SourceRef) => string) | undefined;
}

const NAMES: Record<PresetKind, string> = {
  turn: EVENT_NAMES.conversationTurn,
  function: EVENT_NAMES.conversationFunction,
  usage: EVENT_NAMES.conversationUsage,
};

/** A provider's id of a call written into an event id as it is: letters, digits, `_`, `.`, `-`. */
const PLAIN_ID = /^[A-Za-z0-9_.-]{1,96}$/;

/**
 * The event id of a record of one logged API call: `<preset>-<call id>`, `/<part>` added for one of
 * several records of the call (a tool call's id), from the provider's id of the call (a response or
 * message id). The same call imported again is then one event whatever else about it changed (a
 * batch output read with or without its input file, another `--set user_id`), and two calls are two
 * events even when all else they carry is equal (the usage of two calls that only ask for tools). An
 * id of other characters is hashed (`<preset>~<hash>`); a call without one is named by the hash of
 * its whole line (`raw`): only the same line is the same call.
 */
export function callEventId(
  preset: string,
  callId: string | undefined,
  raw: Record<string, unknown>,
  part?: string | undefined,
): string {
  const call = callId ?? `~${JSON.stringify(canonical(raw))}`;
  const text = part === undefined ? call : `${call}/${part}`;
  return PLAIN_ID.test(call) && (part === undefined || PLAIN_ID.test(part))
    ? `${preset}-${text}`
    : `${preset}~${contentHash(text)}`;
}

/** What the records of one logged call share: its time, whose it is, its line, its ids. */
export interface CallContext {
  ms: number | undefined;
  ids: Pick<PresetRecord, 'user' | 'session' | 'conversation' | 'idPaths'>;
  raw: Record<string, unknown>;
  eventId: (part?: string) => string;
}

/** A call's tool calls as function records, each named after the call and its tool call id. */
export function toolCallItems(
  calls: ReadonlyArray<{ at: string; properties: Record<string, unknown> }>,
  call: CallContext,
): PresetItem[] {
  return calls.map((c) => ({
    ok: true,
    record: {
      kind: 'function',
      at: c.at,
      ms: call.ms,
      ...call.ids,
      eventId: call.eventId(str(c.properties.call_id) ?? c.at),
      properties: c.properties,
      raw: call.raw,
    },
  }));
}

const where = (at: string): string => (at === '' ? '' : `${at}: `);

/** A preset's record → the wire event the flat mapper would have built, validated by the shared schema. */
export function toMapped(
  item: PresetItem,
  source: SourceRef,
  ordinal: number,
  defaults: PresetDefaults,
  format: string,
): MapOutcome {
  if (!item.ok) return { ok: false, reason: `${where(item.at)}${item.reason}` };
  const r = item.record;
  const own = r.ownIdentity === true;
  const user = r.user ?? (own ? undefined : defaults.user?.(source));
  const device = r.device ?? (own ? undefined : defaults.device?.(source));
  if (user === undefined && device === undefined) {
    return {
      ok: false,
      reason: `${where(r.at)}no user id in this ${format} record; give one with --set user_id=<id>`,
    };
  }
  const event: WireJson = {
    type: 'track',
    event: NAMES[r.kind],
    event_id: r.eventId,
    timestamp: r.ms === undefined ? undefined : toIso(r.ms),
    session_id: r.session ?? SESSION_PLACEHOLDER,
    conversation_id: r.conversation,
    user_id: user,
    device_id: device,
    properties: canonical(dropUndefined(r.properties)),
  };
  // As the flat mapper does: a dry run must refuse what the service would (a 1.2 MB message passed it).
  const size = sizeProblem(event);
  if (size !== undefined) return { ok: false, reason: `${where(r.at)}${size}` };
  const checked = wireParser(r.kind).safeParse(event, { error: wireErrorMap });
  if (!checked.success) {
    const text = checked.error.issues
      .map((i) => {
        const field = i.path.length === 1 ? r.idPaths?.[i.path[0] as IdField] : undefined;
        if (field !== undefined) return `${field}: ${i.message}`;
        return `${where(r.at)}${i.path.length > 0 ? `${formatPath(i.path)}: ${i.message}` : i.message}`;
      })
      .join('; ');
    return { ok: false, reason: text };
  }
  return {
    ok: true,
    mapped: {
      source,
      ordinal,
      kind: r.kind,
      event,
      ms: r.ms,
      session: r.session,
      conversation: r.conversation,
      key: user ?? device,
      inSession: true,
      raw: { format: 'jsonl', value: r.raw },
    },
  };
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}
