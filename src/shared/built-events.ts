import type { z } from 'zod';
import { WIRE_EVENT_SCHEMAS, type WireEvent, type WireEventKind } from './event-bodies.js';
import { isPlainObject } from './event-properties.js';
import { kindOf } from './events.js';
import { surelyWithin } from './json-bound.js';

/**
 * The wire fields the importer writes into an event after it validated the event whole (its
 * mapping, with a placeholder for a session id still to be derived): the sessionizer's session id,
 * the derived session's key and gap, and the event id made from the content.
 */
const ADDED_FIELDS = ['session_id', 'session_key', 'session_gap_ms', 'event_id'] as const;

/** Which keys a kind's object keeps, and which nested objects zod writes in its own key order. */
interface Shape {
  /** Known keys in the order zod writes them. */
  keys: readonly string[];
  index: ReadonlyMap<string, number>;
  nested: ReadonlyMap<string, Shape>;
  /** Unknown keys are kept after the known ones (`catchall`), not dropped. */
  keepsOthers: boolean;
  fields: Readonly<Record<string, z.ZodType>>;
}

function unwrapped(schema: z.ZodType): z.ZodType {
  const def = schema._zod.def as { type: string; innerType?: z.ZodType };
  return def.type === 'optional' && def.innerType !== undefined ? unwrapped(def.innerType) : schema;
}

function shapeOf(object: z.ZodType): Shape | undefined {
  const def = object._zod.def as { type: string; shape?: Record<string, z.ZodType>; catchall?: z.ZodType };
  if (def.type !== 'object' || def.shape === undefined) return undefined;
  const nested = new Map<string, Shape>();
  for (const [key, field] of Object.entries(def.shape)) {
    const inner = shapeOf(unwrapped(field));
    if (inner !== undefined) nested.set(key, inner);
  }
  const keys = Object.keys(def.shape);
  return {
    keys,
    index: new Map(keys.map((k, i) => [k, i])),
    nested,
    keepsOthers: def.catchall !== undefined,
    fields: def.shape,
  };
}

interface KindForm {
  shape: Shape;
  /** The kind's transform (the `kind` field, `id` folded into `user_id`, a usage's cost form). */
  finish: z.ZodType;
}

let forms: Map<WireEventKind, KindForm> | undefined;

function formOf(kind: WireEventKind): KindForm | undefined {
  forms ??= new Map(
    Object.entries(WIRE_EVENT_SCHEMAS).flatMap(([k, schema]) => {
      const shape = shapeOf(schema.in);
      return shape === undefined ? [] : [[k as WireEventKind, { shape, finish: schema.out }]];
    }),
  );
  return forms.get(kind);
}

/**
 * A copy of the event's object as zod outputs it: unknown keys dropped (or kept after the known ones
 * with a catchall), nested objects with known keys written in the schema's order, which their stored
 * JSON keeps. The top level keeps the input's order: nothing reads it in order.
 */
function copied(value: Record<string, unknown>, shape: Shape, top: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let last = -1;
  let others = false;
  for (const key in value) {
    const i = shape.index.get(key);
    if (i === undefined) {
      if (!shape.keepsOthers) continue;
      others = true;
      out[key] = value[key];
      continue;
    }
    // A known key after an unknown one, or out of the schema's order: written as zod writes it.
    if (!top && (others || i < last)) return reordered(value, shape);
    last = i;
    const v = value[key];
    const inner = shape.nested.get(key);
    out[key] = inner !== undefined && isPlainObject(v) ? copied(v, inner, false) : v;
  }
  return out;
}

function reordered(value: Record<string, unknown>, shape: Shape): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of shape.keys) {
    if (!(key in value)) continue;
    const v = value[key];
    const inner = shape.nested.get(key);
    out[key] = inner !== undefined && isPlainObject(v) ? copied(v, inner, false) : v;
  }
  if (shape.keepsOthers) for (const key in value) if (!shape.index.has(key)) out[key] = value[key];
  return out;
}

/**
 * An event `cas import` built, as the queue route's parser would output it, or undefined where this
 * cannot vouch for that and the parser must run (issue 16: "no second zod pass over events the
 * importer built itself"). The importer validated the event whole with its kind's schema when it
 * mapped the record; only the fields it wrote since are checked again here, with their own schemas,
 * and the size and reserved keys with the bound the route's parser tries first. The session ends the
 * importer adds, never validated before, are left to the parser.
 */
export function normalizeBuilt(
  raw: unknown,
  eventBytes: number,
  checked: AddedFieldMemo,
): WireEvent | undefined {
  if (!isPlainObject(raw) || !surelyWithin(raw, eventBytes)) return undefined;
  const kind = kindOf(raw);
  if (!kind.ok || kind.value === 'end_session') return undefined;
  const form = formOf(kind.value);
  if (form === undefined) return undefined;
  for (const field of ADDED_FIELDS) {
    const value = raw[field];
    if (value === undefined || checked.get(field) === value) continue;
    const schema = form.shape.fields[field];
    if (schema === undefined || !schema.safeParse(value).success) return undefined;
    checked.set(field, value);
  }
  const result = form.finish.safeParse(copied(raw, form.shape, true));
  return result.success ? (result.data as WireEvent) : undefined;
}

/**
 * The last value of each added field that passed its check: a batch's events share their session's
 * id, key and gap, so most checks are a comparison. One per batch.
 */
export type AddedFieldMemo = Map<string, unknown>;
