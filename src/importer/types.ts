/**
 * Values that flow through the import pipeline (read → map → sessionize → batch → send). A record's
 * fate is always a value (`ok` / `rejected`), never an exception: one bad row must not end the run.
 */

export type InputFormat = 'csv' | 'jsonl';

/** Where a record came from, for `file:line` in every message and in the reject file. */
export interface SourceRef {
  file: string;
  /** 1-based line on which the record starts (a quoted CSV field may span several). */
  line: number;
}

export const where = (s: SourceRef): string => `${s.file}:${s.line}`;

/** A record's content as its reader produced it; CSV keeps cells and the header so no object is built. */
export type RecordValue =
  | { format: 'csv'; header: readonly string[]; cells: string[] }
  | { format: 'jsonl'; value: Record<string, unknown> };

/** What a format reader yields per record of one file (ordinals are added across files later). */
export type FileItem =
  | { ok: true; line: number; value: RecordValue }
  | { ok: false; line: number; reason: string; text: string };

/**
 * Well-formed CSV records whose fields are not split yet: the reading thread finds record boundaries
 * and lines, and whichever thread stages them splits the fields (`csv-reader.ts` `splitCsvPending`).
 */
export interface CsvPending {
  format: 'csv';
  header: readonly string[];
  text: string;
  /** The first line of each record, in order: one per record. */
  lines: number[];
}

/** JSON Lines records checked for UTF-8 and decoded, not yet parsed (`jsonl-reader.ts` `parseJsonlPending`). */
export interface JsonlPending {
  format: 'jsonl';
  texts: string[];
  lines: number[];
}

export type Pending = CsvPending | JsonlPending;

/** A reader's output: records of one input chunk, plus how many were skipped for a resume. */
export interface FileBatch {
  items: FileItem[];
  skipped: number;
  /** Records after `items`, still to be split into fields (only when the reader was asked to defer). */
  pending?: Pending | undefined;
}

/** One record ready for mapping. */
export interface RawRecord {
  source: SourceRef;
  /** Position of the record in the whole run (every file, bad records included), from 0. */
  ordinal: number;
  value: RecordValue;
}

/** A record the reader could not turn into a value (bad UTF-8, broken quoting, not JSON...). */
export interface BadRecord {
  source: SourceRef;
  ordinal: number;
  reason: string;
  /** The record's text as far as it could be recovered, for the reject file. */
  text: string;
}

export type ReadItem = { ok: true; record: RawRecord } | { ok: false; bad: BadRecord };

/** Pending records with their place in the run: the first has ordinal `ordinal`, the next one more. */
export type PendingRecords = Pending & { file: string; ordinal: number };

/** The original record as the reject file shows it: CSV as `{column: cell}`, JSONL as parsed. */
export function originalRecord(value: RecordValue): Record<string, unknown> {
  if (value.format === 'jsonl') return value.value;
  const out: Record<string, unknown> = {};
  value.header.forEach((name, i) => {
    out[name] = value.cells[i] ?? '';
  });
  return out;
}

/** Import-level record kinds of cli.md ("cas import"). */
export const RECORD_KINDS = [
  'turn',
  'usage',
  'function',
  'event',
  'identify',
  'alias',
  'end_conversation',
  'end_session',
  'wire',
] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** A wire event as we build and send it: plain JSON, keys in a fixed order (see event-id.ts). */
export type WireJson = Record<string, unknown>;

/**
 * A record mapped to one wire event, before sessionizing: a missing `session_id` holds a placeholder
 * and a missing `conversation_id` is absent (the sessionizer derives both); `ms` is the event time,
 * or undefined when the record has none (the service then stamps it on arrival).
 */
export interface MappedRecord {
  source: SourceRef;
  ordinal: number;
  kind: RecordKind;
  event: WireJson;
  ms: number | undefined;
  /** Session and conversation ids the record names itself. */
  session: string | undefined;
  conversation: string | undefined;
  /** Whose sessions these are: user_id, else device_id. */
  key: string | undefined;
  /** Kinds that live in a session (everything but identify and alias). */
  inSession: boolean;
  /** The original record, kept only while in flight so a server-side rejection can be written out. */
  raw: RecordValue;
  /** Extra fields left out because they hold no property value (a JSONL object): the run notes each name once. */
  dropped?: LeftOut[] | undefined;
}

/** An extra field left out of a record's properties (or traits), and why. */
export interface LeftOut {
  field: string;
  reason: string;
}

/** A field left out, with the first record it was left out of. */
export interface DroppedField extends LeftOut {
  source: SourceRef;
}

export type MapOutcome = { ok: true; mapped: MappedRecord } | { ok: false; reason: string };

/** An event ready to send, with what delivery and checkpointing need to know about it. */
export interface OutEvent {
  event: WireJson;
  /** Ordinal of the record being processed when this event was emitted (checkpoint bookkeeping). */
  seq: number;
  /** Lane routing key: events with the same key are delivered in order. */
  laneKey: string;
  source: SourceRef;
  raw: RecordValue | undefined;
  /** True for end events the import added itself (not present in the data). */
  synthesized: boolean;
  /** About the size of `event` as JSON (its spill line's length); absent for the small ones added. */
  bytes?: number | undefined;
}

export interface Rejection {
  source: SourceRef;
  reason: string;
  /** The original record (object for JSONL/CSV, text when it could not be parsed). */
  record: unknown;
  /** Checkpoint position the rejection belongs to (the record's ordinal or its event's seq). */
  seq: number;
}
