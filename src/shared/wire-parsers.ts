import { z } from 'zod';
import { WIRE_EVENT_SCHEMAS, type WireEventKind } from './event-bodies.js';

/**
 * Parses of one kind before it is compiled: compiling costs 10-20 ms (code generation, then V8
 * compiling that code), which a command sending one event should not pay, and pays back after
 * about a thousand events.
 */
export const COMPILE_AFTER = 256;

type Schemas = typeof WIRE_EVENT_SCHEMAS;

const uses = new Map<WireEventKind, number>();
const compiled = new Map<WireEventKind, Schemas[WireEventKind]>();

/**
 * The schema to parse a wire event of `kind` with: WIRE_EVENT_SCHEMAS itself for the first parses,
 * then zod's compiled clone of it (`z.compile`). The clone runs a generated fast path and, for a
 * value that fails it, the schema itself, so every refusal (issues, paths, messages) is the
 * schema's own, and what passes is parsed to the same output. Measured on a chat turn: 6.5 µs
 * against 11.5 µs a parse, on each of the importer's mapping, the embedded sender's batch check and
 * the queue route's validation on the service's thread. The schemas stay uncompiled for what reads
 * their definitions (the OpenAPI document).
 */
export function wireParser<K extends WireEventKind>(kind: K): Schemas[K] {
  const done = compiled.get(kind);
  if (done !== undefined) return done as Schemas[K];
  const n = (uses.get(kind) ?? 0) + 1;
  uses.set(kind, n);
  if (n < COMPILE_AFTER) return WIRE_EVENT_SCHEMAS[kind];
  const fast = z.compile(WIRE_EVENT_SCHEMAS[kind]);
  compiled.set(kind, fast);
  return fast;
}
