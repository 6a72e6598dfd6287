import { eventRank } from '../shared/event-order.js';
import { contentHash } from './event-id.js';
import type { MappedRecord, RecordKind, RecordValue, SourceRef, WireJson } from './types.js';

/**
 * A mapped record as it waits in the run's sort: everything the sessionizer needs, keyed so that
 * the sort order depends only on content, never on the order of files or rows. Records are ordered
 * by group (identity records first, then each explicit session, then each user's or device's records
 * without a session id), then by time (records without one last), then by rank (a start before the
 * content at the same instant, ends after it), then by content hash.
 */
export interface Staged extends SortKeys {
  kind: RecordKind;
  event: WireJson;
  key: string | null;
  source: SourceRef;
  /** The original record, kept only for the reject file. */
  raw: RecordValue | null;
  /** `event` as JSON, as it was hashed: the spill line reuses it (absent once read back from a line). */
  json?: string | undefined;
  /** About the size of `event` as JSON: its JSON's length, or its spill line's once read back. */
  bytes: number;
}

export const GROUP = { identity: '0', session: '1', derived: '2', lone: '3' } as const;

export function stage(m: MappedRecord, keepRaw: boolean): Staged {
  const json = JSON.stringify(m.event);
  const h = contentHash(json);
  let g: string;
  if (m.session !== undefined) g = GROUP.session + m.session;
  else if (!m.inSession) g = GROUP.identity;
  else if (m.key !== undefined) g = GROUP.derived + m.key;
  else g = GROUP.lone + h;
  return {
    g,
    bytes: json.length,
    ms: m.ms ?? null,
    // Same instant: a start first, ends last, so "ended before its last turn" cannot come from ties.
    r: eventRank(m.event),
    h,
    opens: opens(m.event),
    kind: m.kind,
    event: m.event,
    key: m.key ?? null,
    source: m.source,
    raw: keepRaw ? m.raw : null,
    json,
  };
}

/** What the sort compares: a staged record's keys, whether held whole or as its spill line. */
export interface SortKeys {
  /** Group key: `0` identity records, `1<session_id>`, `2<user or device key>`, `3<hash>` (no key). */
  g: string;
  ms: number | null;
  r: number;
  /** sha256 (base64url) of the mapped event with no derived ids in it: the record's content. */
  h: string;
  /** An explicit session start opens its session whatever its time (as the service replays one). */
  opens: boolean;
}

const opens = (event: WireJson): boolean => event.type === 'start_session';

export function compareStaged(a: SortKeys, b: SortKeys): number {
  if (a.g !== b.g) return a.g < b.g ? -1 : 1;
  if (a.opens !== b.opens) return a.opens ? -1 : 1;
  if (a.ms !== b.ms) {
    if (a.ms === null) return 1;
    if (b.ms === null) return -1;
    return a.ms - b.ms;
  }
  if (a.r !== b.r) return a.r - b.r;
  if (a.h !== b.h) return a.h < b.h ? -1 : 1;
  return 0;
}

/** The same record twice (every sort key equal): an exact duplicate. */
export const sameRecord = (a: Staged, b: Staged): boolean => compareStaged(a, b) === 0;

/**
 * Spill lines are arrays: a third smaller than objects, and parsed back in the same shape. The line
 * is `JSON.stringify` of that array, assembled around the event's JSON made for its hash: making that
 * JSON again was a tenth of each reading thread's time (a profile of a 300k-row dry run).
 */
export function toLine(s: Staged): string {
  const j = JSON.stringify;
  const event = s.json ?? j(s.event);
  // join makes one flat string; a template literal would make a rope of the parts, held until spilled.
  return [
    `[${j(s.g)}`,
    j(s.ms ?? null),
    j(s.r),
    j(s.h),
    j(s.kind),
    event,
    j(s.key ?? null),
    j(s.source.file),
    j(s.source.line),
    `${j(s.raw ?? null)}]`,
  ].join(',');
}

export function fromLine(line: string): Staged {
  const [g, ms, r, h, kind, event, key, file, sourceLine, raw] = JSON.parse(line) as [
    string,
    number | null,
    number,
    string,
    RecordKind,
    WireJson,
    string | null,
    string,
    number,
    RecordValue | null,
  ];
  return {
    g,
    ms,
    r,
    h,
    opens: opens(event),
    kind,
    event,
    key,
    source: { file, line: sourceLine },
    raw,
    bytes: line.length,
  };
}
