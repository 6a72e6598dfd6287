import type { EventsResult, PropertiesResult } from '../commands/events.js';
import { type ListingOptions, renderListing } from './listing.js';
import type { OutputFormat } from './output.js';

/** `cas events` and `cas properties <event>`. Times are shown as stored (UTC). */

const day = (iso: string | null) => (iso === null ? null : iso.slice(0, 10));

export function renderEvents(result: EventsResult, format: OutputFormat, options: ListingOptions): string {
  const counted = result.events.some((e) => e.count !== null);
  const total = result.events.reduce((n, e) => n + (e.count ?? 0), 0);
  return renderListing(
    result,
    {
      columns: ['event', 'count', 'users', 'first', 'last'],
      rows: result.events.map((e) =>
        format === 'table'
          ? [e.event, e.count, e.users, day(e.first), day(e.last)]
          : [e.event, e.count, e.users, e.first, e.last],
      ),
      empty: 'no events',
      ...(counted ? { note: `${result.events.length} event names, ${total} events` } : {}),
    },
    format,
    options,
  );
}

/**
 * Long stored texts (a turn's whole answer) would make the table unreadable: cut in tables only, and
 * there on one line (an answer's line breaks split one value over rows of the cell).
 */
const TABLE_VALUE_CHARS = 32;

/**
 * A value as a table shows it: a string that reads as another type (`1`, `true`) or as nothing (`""`)
 * quoted, so the string "1" and the number 1 are two values there as in JSON (found by probing).
 */
function valueText(value: unknown): string {
  if (
    typeof value === 'string' &&
    (value === '' || /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/.test(value))
  )
    return JSON.stringify(value);
  return String(value);
}

/** Top values with their counts: `gpt-4o (12), claude (9)`. */
function topText(top: PropertiesResult['properties'][number]['top'], cut: boolean): string {
  return top
    .map((t) => {
      // Line breaks are left to the table, which shows them as `\n` on one line: collapsed to a
      // space, "a\nb" read as "a b" (found by probing).
      const text = cut ? valueText(t.value) : String(t.value);
      const shown =
        cut && text.length > TABLE_VALUE_CHARS ? `${text.slice(0, TABLE_VALUE_CHARS - 1)}…` : text;
      return `${shown}${t.count === null ? '' : ` (${t.count})`}`;
    })
    .join(', ');
}

export function renderProperties(
  result: PropertiesResult,
  format: OutputFormat,
  options: ListingOptions,
): string {
  return renderListing(
    result,
    {
      columns: ['property', 'count', 'types', 'distinct', 'top values'],
      rows: result.properties.map((p) => [
        p.property,
        p.count,
        p.types.join(', '),
        p.distinct,
        topText(p.top, format === 'table'),
      ]),
      empty: `no properties on "${result.event}" events`,
      records: result.properties,
    },
    format,
    options,
  );
}
