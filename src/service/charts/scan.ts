import { zoneOffsetMs } from '../../shared/time-bins.js';
import { binKey, type ChartContext, type Window } from './context.js';
import { propertyThenTrait } from './property-filter.js';
import type { Params, Query } from './sql.js';

/**
 * The relations every chart reads, always narrowed to the caller's project (tenant isolation).
 *
 * Identity: an event's person is its user's canonical user (decisions §3: a merged anonymous user
 * counts as the user it was merged into). Merges are rare, so only the merged rows are joined
 * (`merged` is tiny), which is much cheaper than joining every event to every user. A person's
 * traits are those of the canonical row (`persons`).
 */

export function mergedCte(q: Query, ctx: ChartContext): string {
  return q.cte(
    'merged',
    () =>
      `SELECT user_id, canonical_user_id FROM users WHERE project_id = ${q.params.bind(ctx.project)} AND canonical_user_id <> user_id`,
  );
}

/** Every person of the project with their current traits: the universe user filters choose from. */
export function personsCte(q: Query, ctx: ChartContext): string {
  return q.cte(
    'persons',
    () =>
      `SELECT user_id AS person, traits FROM users WHERE project_id = ${q.params.bind(ctx.project)} AND user_id = canonical_user_id`,
  );
}

/** SQL for the person of an event or session row whose raw user column is `userColumn`. */
export function personOf(userColumn: string, mergedAlias: string): string {
  return `coalesce(${mergedAlias}.canonical_user_id, ${userColumn})`;
}

/** Conditions of the optional session_id / conversation_id query parameters on an events row. */
export function scopeConditions(q: Query, ctx: ChartContext, alias: string): string[] {
  const out: string[] = [];
  if (ctx.scope.session_id !== undefined) {
    out.push(`${alias}.session_id = ${q.params.bind(ctx.scope.session_id)}`);
  }
  if (ctx.scope.conversation_id !== undefined) {
    out.push(`${alias}.conversation_id = ${q.params.bind(ctx.scope.conversation_id)}`);
  }
  return out;
}

/**
 * The event-property-then-trait values one scan needs, each computed once per row as a column of
 * the scan (`s.v0`, `s.v1`, ...). Filters refer to the column many times (type checks, text,
 * numbers); inlining the JSON extraction at each use made filtered charts 2-3x slower.
 */
export class ScanValues {
  private readonly names: string[] = [];

  constructor(private readonly p: Params) {}

  /** The scan column holding `name`'s value (JSON, NULL when absent). */
  of(name: string): string {
    let i = this.names.indexOf(name);
    if (i < 0) i = this.names.push(name) - 1;
    return `s.v${i}`;
  }

  columns(): string[] {
    return this.names.map(
      (name, i) => `${propertyThenTrait(this.p, 'e.properties', 't.traits', name)} AS v${i}`,
    );
  }
}

/**
 * A subquery of the project's events in `window` (and the request's scope), one row per event with
 * columns event, event_id, ts, session_id, conversation_id, properties, user_id, person and the
 * `values` filters asked for. Filters refer to these columns through the alias `s`.
 *
 * `persons: false` leaves out `person` and the join that resolves it, for callers that read no
 * person (DuckDB cannot drop that LEFT JOIN itself, not knowing `merged` has one row per user).
 * Such a caller tests `s.user_id IS NOT NULL` for "has a person": an event without a user matches
 * no merged row, so its person is NULL exactly when its user is.
 */
export function eventScan(
  q: Query,
  ctx: ChartContext,
  window: Window,
  values?: ScanValues,
  options: { persons?: boolean } = {},
): string {
  const p = q.params;
  const extra = values?.columns() ?? [];
  const persons = options.persons ?? true;
  if (!persons && extra.length > 0) throw new Error('scan values read traits, which need the person');
  const person = personOf('e.user_id', 'm');
  const joins = persons ? [`LEFT JOIN ${mergedCte(q, ctx)} m ON m.user_id = e.user_id`] : [];
  if (extra.length > 0) joins.push(`LEFT JOIN ${personsCte(q, ctx)} t ON t.person = ${person}`);
  const where = [
    `e.project_id = ${p.bind(ctx.project)}`,
    `e.ts >= ${p.instant(window.lo)}`,
    `e.ts < ${p.instant(window.hi)}`,
    ...scopeConditions(q, ctx, 'e'),
  ];
  const columns = ['e.properties', 'e.user_id', ...(persons ? [`${person} AS person`] : []), ...extra];
  return `(SELECT e.event, e.event_id, e.ts, e.session_id, e.conversation_id, ${columns.join(', ')}
    FROM events e ${joins.join(' ')}
    WHERE ${where.join(' AND ')})`;
}

/**
 * `date_trunc` in the range's zone (decisions §6): the local calendar date starting the bin.
 *
 * `AT TIME ZONE` goes through ICU for every row (some 0.6 µs: 60 ms per 100,000 events, more than
 * the scan), so within the chart's bins the date comes from plain arithmetic instead: over a run of
 * bins whose starts are local midnights under one offset, `ts + offset` maps each bin's instants
 * [start, end) exactly onto its local days, which `date_trunc` of a zone-less timestamp cuts as
 * ICU would. A bin whose end has another offset (a DST change inside it) is matched by its
 * instants. Instants outside the bins (none, for rows of the range) keep the ICU expression.
 */
export function binExpr(q: Query, ctx: ChartContext, ts: string): string {
  const p = q.params;
  const period = p.bind(ctx.range.period);
  const icu = `date_trunc(${period}, ${ts} AT TIME ZONE ${p.bind(ctx.range.tz)})::DATE`;
  const pieces = binPieces(ctx);
  if (pieces === undefined) return icu;
  const branches = pieces.map((piece) => {
    const within = `${ts} >= ${p.instant(piece.lo)} AND ${ts} < ${p.instant(piece.hi)}`;
    const date =
      piece.offsetUs === undefined
        ? `${p.bind(piece.date)}::DATE`
        : `date_trunc(${period}, make_timestamp(epoch_us(${ts}) + ${p.bind(String(piece.offsetUs))}::BIGINT))::DATE`;
    return `WHEN ${within} THEN ${date}`;
  });
  return `CASE ${branches.join(' ')} ELSE ${icu} END`;
}

/** Runs of bins that one offset maps onto their local dates (offsetUs), or single bins matched by instants (date). */
type BinPiece = { lo: Date; hi: Date; offsetUs?: number; date: string };

/** More pieces than this (a range of many years of DST changes) and ICU is as cheap as the CASE. */
const MAX_BIN_PIECES = 48;

const piecesByContext = new WeakMap<ChartContext, BinPiece[] | undefined>();

function binPieces(ctx: ChartContext): BinPiece[] | undefined {
  if (piecesByContext.has(ctx)) return piecesByContext.get(ctx);
  const pieces: BinPiece[] = [];
  const midnight = (iso: string) => Date.parse(`${iso.slice(0, 10)}T00:00:00Z`);
  for (const bin of ctx.bins) {
    const lo = bin.start.getTime();
    const hi = bin.end.getTime();
    const offset = zoneOffsetMs(lo, ctx.range.tz);
    const regular = lo + offset === midnight(bin.startIso) && hi + offset === midnight(bin.endIso);
    const last = pieces.at(-1);
    if (!regular) pieces.push({ lo: bin.start, hi: bin.end, date: binKey(bin) });
    else if (last?.offsetUs === offset * 1000 && last.hi.getTime() === lo) last.hi = bin.end;
    else pieces.push({ lo: bin.start, hi: bin.end, offsetUs: offset * 1000, date: binKey(bin) });
  }
  const out = pieces.length === 0 || pieces.length > MAX_BIN_PIECES ? undefined : pieces;
  piecesByContext.set(ctx, out);
  return out;
}
